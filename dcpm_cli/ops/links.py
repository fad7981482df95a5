"""`dcpm link` and `dcpm unlink`: the user mends a revision arc the writer got wrong (#18).

A small model misses most changes of mind (the pair benchmark's recall is a third), so a
change is often kept beside the belief it ended, both shown with their dates; and now and then
it links two beliefs that are both still true, which hides one. The person whose memory it is
knows better, and says so:

- `link EARLIER LATER`: LATER's arc goes on from EARLIER's. The two arcs are joined end to
  start, as the writer joins them: the first state of LATER's arc supersedes the current state
  of EARLIER's, so every state of the one comes before every state of the other, and the
  current state of LATER's arc is current for both. Refused, with the order that would work,
  when that would run backwards in time.
- `unlink ITEM`: ITEM no longer replaces the state before it. The arc is cut there: the state
  before is current again, and ITEM's part keeps what came after it.

Both read and write under the store's write lock. Each is logged first — a SUPERSEDE or an
UNLINK event, "by the user", and a JUDGED event for the pair, so a dream's re-link
(dream/relink.py) never asks the model about it again — then made in one commit of the two
pointers: a kill leaves the arc as it was, or changed whole. An export carries both to another
copy of the memory (ops/portability.py, `_relink`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING

from dcpm_cli.errors import InputError
from dcpm_cli.models import CHAIN_OPS, JUDGED, SUPERSEDE, UNLINK, Event, short_hash, utcnow
from dcpm_cli.write.reconcile import KINDS, said_before, subject_refusal

if TYPE_CHECKING:
    from datetime import datetime, tzinfo

    from dcpm_cli.models import MemoryItem
    from dcpm_cli.store import Store

BY_USER = "by the user"
_IDS = "item ids (m_…) are shown by `dcpm recall` and `dcpm history`"


@dataclass
class Linked:
    earlier: MemoryItem  # the state that is no longer current (the head of the earlier arc)
    later: MemoryItem  # the state that now supersedes it (the first of the later arc)
    done: bool = True  # False: it was so already; nothing changed
    notes: list[str] = field(default_factory=list)  # what the user may not have meant


def link(store: Store, earlier_id: str, later_id: str, zone: tzinfo = UTC) -> Linked:
    """Join the arc of `later_id` after the arc of `earlier_id` (see the module's text); a
    refusal names `zone`'s days (the user's). All read under the write lock: what it writes is
    what it read (a writer's group, a dream, another link wait)."""
    with store.write():
        return _link(store, earlier_id, later_id, zone)


def unlink(store: Store, item_id: str) -> Linked:
    """Cut the arc through `item_id` before it: the state it replaced is current again."""
    with store.write():
        return _unlink(store, item_id)


def _link(store: Store, earlier_id: str, later_id: str, zone: tzinfo) -> Linked:
    if earlier_id == later_id:
        raise InputError("an item cannot replace itself", "give two item ids: EARLIER LATER")
    first, second = _item(store, earlier_id), _item(store, later_id)
    before, after = store.chain(first.id), store.chain(second.id)
    if any(c.id == second.id for c in before):
        order = [c.id for c in before]
        if order.index(first.id) < order.index(second.id):
            return Linked(first, second, done=False)
        raise InputError(
            f"{second.id} comes before {first.id} in their arc already",
            f"`dcpm unlink` cuts an arc; `dcpm history {first.id}` shows it",
        )
    head, root = before[-1], after[0]
    if not _may_follow(store, root, head):
        swapped = _may_follow(store, before[0], after[-1])
        hint = (
            f"did you mean `dcpm link {second.id} {first.id}`?"
            if swapped
            else "the two arcs overlap in time; `dcpm unlink` can cut one first"
        )
        whose = "" if head.id == first.id else f", the current state of {first.id}'s arc,"
        later_one = "" if root.id == second.id else f", the first state of {second.id}'s arc,"
        raise InputError(
            f"{root.id}{later_one} is about {_day(root, zone)} and was said before {head.id}{whose} "
            f"({_day(head, zone)}): it cannot replace it",
            hint,
        )
    at = utcnow()
    # The events first: a kill between the two commits leaves the arc as it was, and the
    # command asked again makes it (a pair logged as judged is never asked about by a dream).
    store.log_events(
        [
            _event(SUPERSEDE, root, head, at, new_text=root.text, detail=f"linked {BY_USER}"),
            _event(JUDGED, root, head, at, detail=f"replaces: {BY_USER}"),
        ]
    )
    store.set_chain_links({head.id: (head.supersedes, root.id), root.id: (head.id, root.superseded_by)})
    notes = []
    if (head.id, root.id) != (first.id, second.id):
        notes.append(
            f"joined end to start: {root.id}, the first of its arc, now replaces {head.id}, the last of its"
        )
    if why := subject_refusal(root, head):
        notes.append(f"linked as asked, though the model would not: {why}")
    return Linked(head, root, notes=notes)


def _unlink(store: Store, item_id: str) -> Linked:
    item = _item(store, item_id)
    if not item.supersedes and (cut := _cut_before(store, item)) is not None:
        return Linked(cut, item, done=False)  # asked again: it is so
    if not item.supersedes:
        hint = (
            f"it is replaced by {item.superseded_by}: `dcpm unlink {item.superseded_by}` cuts that link"
            if item.superseded_by
            else "it is an arc of its own already"
        )
        raise InputError(f"{item.id} replaces nothing", hint)
    earlier = store.get_items([item.supersedes]).get(item.supersedes)
    at = utcnow()
    links: dict[str, tuple[str | None, str | None]] = {item.id: (None, item.superseded_by)}
    if earlier is not None:
        # Events first (see `_link`); and the state before loses its pointer only if it points
        # here (a broken arc, which `dcpm check` flags, keeps its other link).
        store.log_events(
            [
                _event(UNLINK, item, earlier, at, detail=f"no longer replaces it: {BY_USER}"),
                _event(JUDGED, item, earlier, at, detail=f"unrelated: {BY_USER}"),
            ]
        )
        if earlier.superseded_by == item.id:
            links[earlier.id] = (earlier.supersedes, None)
    store.set_chain_links(links)
    if earlier is None:  # a dangling pointer (a store `dcpm check` would flag): cut all the same
        earlier = item
    return Linked(earlier, item)


def _cut_before(store: Store, item: MemoryItem) -> MemoryItem | None:
    """The state the user last cut `item` from, if that is its last change of arc."""
    events = [e for e in store.events_for(item.id) if e.item_id == item.id and e.op in CHAIN_OPS]
    last = max(events, key=lambda e: e.at, default=None)
    if last is None or last.op != UNLINK:
        return None
    return store.get_items([last.target_id]).get(last.target_id)


def _item(store: Store, ident: str) -> MemoryItem:
    ident = ident.strip()
    item = store.get_items([ident]).get(ident)
    if item is None:
        what = "a raw input" if store.get_raw([ident]) else "a graph node" if store.get_nodes([ident]) else ""
        problem = f"{ident!r} is {what}, not a belief" if what else f"no item with id {ident!r}"
        raise InputError(problem, _IDS)
    if item.kind not in KINDS:
        raise InputError(f"{ident} is a {item.kind}; only facts and identity items have arcs", _IDS)
    return item


def _may_follow(store: Store, later: MemoryItem, earlier: MemoryItem) -> bool:
    """The writer's own rule (`said_before`): a state may follow another unless it was
    both said and is about a time before it ("swimming since March", said in June, may follow
    April's running)."""
    said = [r.said_at for r in store.get_raw(later.raw_ids).values()] or [later.created_at]
    return not said_before(later, max(said), earlier)


def _day(item: MemoryItem, zone: tzinfo) -> str:
    return f"{item.event_at.astimezone(zone):%Y-%m-%d}"


def _event(
    op: str, item: MemoryItem, target: MemoryItem, at: datetime, *, new_text: str = "", detail: str = ""
) -> Event:
    """An event of the user's own: its id holds the time, so linking, unlinking and linking the
    same pair again are three events, not one kept three times."""
    ident = "e_" + short_hash(op, item.id, target.id, str(at))
    return Event(op, item.id, "", target.id, "", new_text, detail, at=at, id=ident)
