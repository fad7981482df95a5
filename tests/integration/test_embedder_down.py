"""Raw persistence does not depend on the embedder: when it fails, the words are stored
without a vector (still found by their words), and the next write or `dcpm process` fills the
vector in. The embedder is the real Ollama client against the fake Ollama server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support.replies import extraction, item

from dcpm_cli.embed import OllamaEmbedder
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DONE, PENDING, RawInput
from dcpm_cli.read.recall import recall
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

TURNS = ["I moved to Leeds in March.", "The flat has a tiny garden.", "I grow chillies there."]


def test_inputs_stored_while_the_embedder_is_down_get_their_vectors_later(
    fake_ollama, settings, dcpm_home: Path
) -> None:
    embedder = OllamaEmbedder("tiny", host=fake_ollama.host, timeout=10)
    llm = ScriptedLLM()
    writer = Writer(Store(settings.store, embedder), embedder, llm, settings)
    raws = [RawInput(text=t, session="move") for t in TURNS]
    fake_ollama.models.discard("tiny")  # the embedding model is gone: every embed call fails

    report = writer.add(raws)

    assert report.stored == 3 and llm.calls == []
    assert report.llm_error.startswith("the embedder failed: Ollama does not have the model 'tiny'")
    store = writer.store
    got = store.get_raw([r.id for r in raws])
    assert [got[r.id].text for r in raws] == TURNS and {got[r.id].status for r in raws} == {PENDING}
    assert {r.id for r in store.raw_without_vectors()} == {r.id for r in raws}
    hits = recall(store, embedder=_FixedQuery(embedder.dim), query="chillies garden", k=3)
    assert "I grow chillies there." in [h.text for h in hits.hits]  # found by its words meanwhile

    fake_ollama.models.add("tiny")  # back
    llm.enqueue(*(extraction(item(f"The user said: {t}", kind="summary")) for t in TURNS))
    done = writer.process_pending()

    assert done.llm_error == "" and done.extracted == 3
    assert store.raw_without_vectors() == []
    vectors = {r["id"]: r for r in store.table("raw_inputs").search().to_arrow().to_pylist()}
    for r in raws:
        assert np.allclose(vectors[r.id]["vector"], embedder.embed([r.text])[0], atol=1e-6)
        assert vectors[r.id]["error"] == "" and store.get_raw([r.id])[r.id].status == DONE
    (passage,) = store.all_passages()
    assert passage.raw_ids == [r.id for r in raws]
    assert store.vector_search("raw", embedder.embed([TURNS[2]])[0], 1)[0][0].id == raws[2].id


def test_the_next_add_fills_in_what_a_failed_embedder_left(fake_ollama, settings) -> None:
    embedder = OllamaEmbedder("tiny", host=fake_ollama.host, timeout=10)
    writer = Writer(Store(settings.store, embedder), embedder, None, settings)
    fake_ollama.models.discard("tiny")
    first = writer.add([RawInput(text=TURNS[0])], extract=False)
    fake_ollama.models.add("tiny")

    second = writer.add([RawInput(text=TURNS[1])], extract=False)

    assert first.llm_error and not second.llm_error
    assert writer.store.raw_without_vectors() == []
    assert writer.store.vector_search("raw", embedder.embed([TURNS[0]])[0], 1)[0][0].text == TURNS[0]


def test_piped_stdin_is_kept_when_the_ollama_embedder_is_down(cli, fake_ollama, dcpm_home: Path) -> None:
    fake_ollama.models.discard("tiny")

    done = cli(
        "--embedder",
        "ollama:tiny",
        "add",
        "-",
        input="Words for a store that cannot embed.\n",
        OLLAMA_HOST=fake_ollama.host,
    )

    assert done.exit_code == 3, done.stderr
    (kept,) = (dcpm_home / "rejected").iterdir()
    assert kept.read_text() == "Words for a store that cannot embed.\n"
    assert f"what was piped in is kept at {kept}" in "".join(done.stderr.split("\n"))


class _FixedQuery:
    """A query embedder that works while the store's one does not (recall by words)."""

    model_id = "ollama:tiny"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed(self, texts):
        return np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)
