"""Named days and long weekends: which days "Christmas", "last Thanksgiving" or "the August
long weekend" mean to a user in a country. Plain calendar arithmetic, no table to download: the
Gregorian computus for Easter, the n-th weekday of a month for the rest. The country is read from
the user's `timezone` (America/Toronto is Canada); an unknown one (UTC, the default) reads the
days the United States and most English-speaking countries share.

Days a lunar calendar sets (Eid, Diwali, Hanukkah, the Lunar New Year) are no arithmetic here:
a question naming them is searched as words.

And the day a sentence's weekday or "yesterday" means, told on a day ("the operation was on
Tuesday", written on a Thursday: that Tuesday): `day_said`, which dates an event a question
counts from. Its patterns too are compiled when first used, by a question that counts from one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from datetime import MAXYEAR, MINYEAR, UTC, date, datetime, timedelta, tzinfo


class _Lazy:
    """A pattern compiled when first used: most questions name no day, and compiling these
    cost a cold `dcpm recall` ~15 ms (`python -X importtime`). With a `gate`, a text the gate
    does not find is not searched at all (it cannot hold a match)."""

    def __init__(self, pattern: str, flags: int = 0, gate: re.Pattern[str] | None = None) -> None:
        self.pattern, self.flags, self.gate = pattern, flags, gate
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def _shut(self, text: str) -> bool:
        return self.gate is not None and self.gate.search(text) is None

    def search(self, text: str) -> re.Match[str] | None:
        return None if self._shut(text) else self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return None if self._shut(text) else self.compiled.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return None if self._shut(text) else self.compiled.fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return iter(()) if self._shut(text) else self.compiled.finditer(text)

    def split(self, text: str) -> list[str]:
        return [text] if self._shut(text) else self.compiled.split(text)


# Every name below holds one of these words: a question without one names no day, and neither
# HOLIDAY nor LONG_WEEKEND is compiled or run for it (their gate).
_MENTIONS = re.compile(
    r"new\s+year|christmas|x-?mas|boxing|valentine|patrick|hallowe|friday|easter|shrove|pancake|mardi|"
    r"mother|father|thanksgiving|memorial|labou?r|canada|victoria|independence|july|bonfire|fawkes|"
    r"remembrance|veterans|anzac|australia|waitangi|bastille|juneteenth|burns|weekend|bank\s+holiday",
    re.I,
)


# A named day: "on Christmas Eve", "over Easter", "last Thanksgiving", "Christmas 2024", "the
# Christmas before last", "the Labour Day weekend". Like a season's, a name that is a word of a
# thing ("the Christmas tree", "Easter eggs", "the Halloween costume") is not a time: after it
# come only the end, "'s", a meal or part of a day, or a word that is no noun.
_NO_NOUN = (
    r"(?=['’]s\b|\s*[,.;:?!)—…-]|\s*$|\s+(?:dinner|lunch|breakfast|brunch|morning|afternoon|evening|"
    r"night|and|or|but|so|when|while|before|after|with|for|at|in|on|to|of|i|we|my|our|did|was|were|"
    r"had|have|has|is|then|last|this|that|together|alone|again|itself|at\s+all)\b)"
)
HOLIDAY = _Lazy(
    r"\b(?:(since)\s+)?(?:(this\s+past|this|last|past|previous)\s+)?(?:the\s+)?"
    r"(new\s+year['’]?s\s+eve|new\s+year['’]?s(?:\s+day)?|(?-i:New\s+Year)(?!['’]?s)"
    r"|(?:christmas|x-?mas)\s+eve|christmas\s+day|christmas\s*time|christmas|x-?mas"
    r"|boxing\s+day|valentine['’]?s(?:\s+day)?|st\.?\s+patrick['’]?s(?:\s+day)?|saint\s+patrick['’]?s(?:\s+day)?"
    r"|halloween|hallowe['’]en|good\s+friday|easter\s+sunday|easter\s+monday|easter"
    r"|shrove\s+tuesday|pancake\s+day|mardi\s+gras|mother['’]?s['’]?\s+day|mothering\s+sunday"
    r"|father['’]?s['’]?\s+day|thanksgiving(?:\s+day)?|black\s+friday|memorial\s+day|labou?r\s+day"
    r"|canada\s+day|victoria\s+day|independence\s+day|fourth\s+of\s+july|4th\s+of\s+july"
    r"|bonfire\s+night|guy\s+fawkes(?:\s+night)?|remembrance\s+day|veterans['’]?\s+day|anzac\s+day"
    r"|australia\s+day|waitangi\s+day|bastille\s+day|juneteenth|burns\s+night)"
    r"(?:\s+(?:of\s+|in\s+)?((?:19|20)\d{2}))?"
    r"(\s+before\s+last)?"
    r"(?:\s+(long\s+weekend|weekend|bank\s+holiday(?:\s+weekend)?|break|holidays?|vacation|period))?\b"
    + _NO_NOUN,
    re.I,
    gate=_MENTIONS,
)
# A long weekend, a bank holiday: "over the bank holiday", "the August long weekend", "the
# late May bank holiday", "over bank holiday weekend", "last long weekend".
LONG_WEEKEND = _Lazy(
    r"\b(?:(since)\s+)?(?:(this|last|past|previous|most\s+recent)\s+|the\s+)?"
    r"(?:(early|late)\s+)?(?:(spring|summer|easter|christmas|january|february|march|april|may|june|"
    r"july|august|september|october|november|december)\s+)?"
    r"(long\s+weekend|bank\s+holiday(?:\s+(?:weekend|monday))?)(\s+before\s+last)?\b" + _NO_NOUN,
    re.I,
    gate=_MENTIONS,
)
# A named day said as a point of reference, not as the time asked about: "did I quit before or
# after Christmas?", "what did I say about Easter?", "between Christmas and New Year's",
# "Christmas compared to Easter"; a title ("did I watch Independence Day?", "who sang Last
# Christmas?"); none in particular ("a long weekend", "our first Easter in Sydney", "that
# Christmas", "every Christmas"); another calendar's ("Chinese New Year", "Orthodox Easter").
_REFERENCE = _Lazy(
    r"\b(?:before|after|until|till|til|by|between|and|about|regarding|re|of|compared\s+(?:to|with)|"
    r"versus|vs\.?|watch|watched|watching|see|saw|seen|read|sing|sang|sung|hear|heard|mention|"
    r"mentioned|add|added|recommend|recommended|play|played|movie|film|song|album|show|episode|book|"
    r"called|titled|named|first|that|which|every|each|any|a|an|one|"
    r"chinese|lunar|jewish|hebrew|persian|iranian|vietnamese|korean|tamil|sikh|hindu|islamic|hijri|"
    r"thai|bengali|orthodox|greek|coptic|ukrainian|russian|serbian|ethiopian|julian|armenian)\s+$",
    re.I,
)
# "The last Christmas we spent with grandma": the last of a kind, not the latest.
_LAST_OF = _Lazy(r"\b(?:the|my|our)\s+$", re.I)
_CLAUSE = _Lazy(r"^\s+(?:we|I|that|which|when|before|with|she|he|they|mum|mom|dad)\b", re.I)
# A question about a day in general or long ago, not the latest one: "did we ever spend
# Christmas in Spain?", "what do we always do at Christmas?", "at Christmas when I was little".
_GENERAL = _Lazy(
    r"\b(?:ever|always|usually|never|used\s+to|growing\s+up|childhood|as\s+a\s+(?:kid|child)|"
    r"when\s+\w+(?:\s+\w+)?\s+(?:was|were)\s+(?:little|young|younger|small|kids?|children|"
    r"a\s+(?:kid|child|baby|teenager|student))|when\s+(?:I|we)\s+lived)\b",
    re.I,
)
# A plan, said before the day: "what were my plans for Christmas?", "did I tell you what we're
# doing…", "what did we decide to do…", "is mum coming at Easter?".
_PLAN = _Lazy(
    r"\b(?:plans?|planned|planning|(?:decide|decided|agree|agreed|want|wanted|hope|hoped|hoping|intend|"
    r"intended)\s+to|(?:am|is|are|['’]m|['’]s|['’]re)\s+(?:going|doing|coming|hosting|having|spending|"
    r"visiting|flying|driving)|going\s+to|gonna|(?-i:will)|(?:I|we)['’]ll|(?:I|we)\s+(?:would|will)|"
    r"won['’]t"
    # said beforehand: "what did I say I was doing for Easter?" (not "what was I doing")
    r"|(?:say|said|tell|told|mention|mentioned)\b[^.?!]{0,30}\b(?:I|we)\s+(?:was|were)\s+(?:going|doing|"
    r"coming|hosting|having|spending|visiting))\b",
    re.I,
)
# "For Christmas" with what is done beforehand: a purpose ("did I book the flights for
# Christmas?", "what did I buy for Mother's Day?"), said weeks before the day.
_FOR = _Lazy(r"\bfor\s+$", re.I)
_AHEAD = _Lazy(
    r"\b(?:buy|bought|buying|order|ordered|ordering|book|booked|booking|make|made|making|prepare|"
    r"prepared|save|saved|saving|wrap|wrapped|send|sent|pack|packed|knit|knitted|decorate|decorated|"
    r"shop|shopped|shopping|haircut|ready|reserve|reserved|arrange|arranged)\b",
    re.I,
)
_SENTENCE = _Lazy(r"[^.!?:;]*(?:[.!?:;]+|$)")  # "I always forget: what did we do at Easter?"


# A country, read from an IANA zone's name.
_ZONES = {
    "CA": ("America/Toronto", "America/Vancouver", "America/Montreal", "America/Edmonton",
           "America/Winnipeg", "America/Halifax", "America/St_Johns", "America/Regina",
           "America/Moncton", "America/Whitehorse", "America/Yellowknife", "America/Iqaluit",
           "America/Glace_Bay", "America/Goose_Bay", "America/Swift_Current", "Canada/"),
    "US": ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles",
           "America/Phoenix", "America/Anchorage", "America/Detroit", "America/Boise",
           "America/Indiana/", "America/Kentucky/", "America/North_Dakota/", "America/Juneau",
           "America/Sitka", "America/Nome", "America/Menominee", "Pacific/Honolulu", "US/"),
    "IE": ("Europe/Dublin", "Eire"),
    "GB": ("Europe/London", "Europe/Belfast", "Europe/Guernsey", "Europe/Jersey", "Europe/Isle_of_Man",
           "GB"),
    "AU": ("Australia/",),
    "NZ": ("Pacific/Auckland", "Pacific/Chatham", "NZ"),
}  # fmt: skip
_UNKNOWN = ("", "UTC", "GMT", "Universal", "Zulu", "UCT", "Greenwich")
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december")  # fmt: skip
_FIXED = {
    "new years eve": (12, 31), "new years day": (1, 1), "christmas eve": (12, 24),
    "christmas day": (12, 25), "boxing day": (12, 26), "valentines": (2, 14),
    "st patricks": (3, 17), "halloween": (10, 31), "canada day": (7, 1),
    "fourth of july": (7, 4), "4th of july": (7, 4), "bonfire night": (11, 5),
    "guy fawkes": (11, 5), "guy fawkes night": (11, 5), "remembrance day": (11, 11),
    "veterans day": (11, 11), "anzac day": (4, 25), "australia day": (1, 26),
    "waitangi day": (2, 6), "bastille day": (7, 14), "juneteenth": (6, 19), "burns night": (1, 25),
}  # fmt: skip
_FROM_EASTER = {"easter sunday": 0, "easter monday": 1, "good friday": -2, "mothering sunday": -21,
                "shrove tuesday": -47, "pancake day": -47, "mardi gras": -47}  # fmt: skip

Days = tuple[date, date, date]  # the first, the last and the main one (the day counted from)


def country(zone: tzinfo) -> str:
    """ "CA", "US", "GB", "IE", "AU", "NZ" for a zone of theirs, "" for UTC and the like (the days
    most English-speaking countries share), "other" for any other country's."""
    zone_key = str(getattr(zone, "key", ""))
    if zone_key in _UNKNOWN or zone_key.startswith("Etc/"):
        return ""
    return next((c for c, zones in _ZONES.items() if zone_key.startswith(zones)), "other")


def as_time(text: str, pattern: _Lazy = HOLIDAY) -> Iterator[re.Match[str]]:
    """The named days (or, with `LONG_WEEKEND`, long weekends) `text` says as a time: not a
    point of reference, a title, none in particular, a plan or a purpose. A year, "since",
    "last" or "before last" names one whatever the sentence around it says."""
    for m in pattern.finditer(text):
        before = text[max(0, m.start() - 60) : m.start()]
        which = which_of(m)
        year_or_before_last = m.group(4) or m.group(5) if pattern is HOLIDAY else m.group(6)
        named = m.group(1) or which in ("last", "this past", "previous") or year_or_before_last
        if m.group(1) is None and _REFERENCE.search(before):
            continue
        if m.group(2) == "Last" and before.strip() and not before.rstrip().endswith((".", "!", "?")):
            continue  # "Did I add Last Christmas to my playlist?": a title
        if (
            (m.group(2) or "").lower() == "last"
            and _LAST_OF.search(before)
            and _CLAUSE.match(text[m.end() :])
        ):
            continue  # "the last Christmas we spent with grandma"
        if named:
            yield m
            continue
        sentence = next(x.group(0) for x in _SENTENCE.finditer(text) if x.end() >= m.end())
        if _GENERAL.search(sentence) or _PLAN.search(sentence):
            continue
        if _FOR.search(before) and _AHEAD.search(sentence):
            continue
        yield m


def which_of(m: re.Match[str]) -> str:
    """The word of a `HOLIDAY` or `LONG_WEEKEND` match that says which one ("last", "this past",
    "previous"), lowercase and single-spaced; "" for none ("most recent" is the latest, as none)."""
    which = " ".join((m.group(2) or "").lower().split())
    return "" if which == "most recent" else which


def normal(name: str) -> str:
    """A `HOLIDAY` name as one key: "St. Patrick's Day" → "st patricks", "X-mas" → "christmas"."""
    n = " ".join(re.sub(r"['’.]", "", name.lower()).replace("saint ", "st ").split())
    n = re.sub(r"^x-?mas", "christmas", n)
    n = {"christmastime": "christmas", "christmas time": "christmas", "new year": "new years"}.get(n, n)
    return re.sub(r"s day$", "s", n) if n.startswith(("valentines", "st patricks")) else n


def occurrences(name: str, span: str, where: str, around: int) -> list[Days]:
    """The days of `name` in the years around `around`, newest first (none that `where`, a
    `country`, has no one date for)."""
    out = []
    for year in range(around + 1, around - 4, -1):
        if MINYEAR < year < MAXYEAR and (days := _days(normal(name), span.lower(), year, where)):
            out.append(days)
    return out


def pick(
    seen: list[Days],
    today: date,
    which: str,
    *,
    about_past: bool,
    before_last: bool = False,
    since: bool = False,
    year: int | None = None,
) -> Days | None:
    """Which of `seen` (newest first) a question means: `year`'s; with `since`, the latest whose
    main day is gone; else the latest one begun, "last" the one before it when it is under way,
    "this" the coming one in a plan once it is over, "before last" the one before the latest
    over."""
    if year:
        return next((d for d in seen if d[2].year == year), None)
    if since:
        return next((d for d in seen if d[2] < today), None)
    begun = [d for d in seen if d[0] <= today]
    if not begun:
        return None
    if before_last:
        over = [d for d in begun if d[1] < today]
        return over[1] if len(over) > 1 else None
    if which in ("last", "past", "previous", "this past") and begun[0][1] >= today:
        return begun[1] if len(begun) > 1 else None
    if which == "this" and begun[0][1] < today and not about_past:
        coming = [d for d in seen if d[0] > today]
        return coming[-1] if coming else begun[0]
    return begun[0]


def long_weekends(year: int, where: str) -> list[tuple[date, date, set[str]]]:
    """A country's long weekends and bank holidays of `year`, in order, each (first day, last
    day, the words that name it: its month, "early" / "late" / "spring" / "summer" / "easter" /
    "christmas"); none for a country this knows none of. A holiday on a weekend moves to the
    next weekday; one next to a weekend takes it in."""
    if not MINYEAR < year < MAXYEAR - 1 or where not in ("GB", "IE", "CA", "US"):
        return []
    out = [_off(date(year, 1, 1), date(year, 1, 1), {"january", "new"}, where)]
    boxing = date(year, 12, 26) if where != "US" else date(year, 12, 25)
    out.append(_off(date(year, 12, 25), boxing, {"december", "christmas"}, where))
    easter = _easter(year)
    if where != "US":  # Ireland's Good Friday is no public holiday
        good_friday = easter - timedelta(days=1 if where == "IE" else 2)
        out.append((good_friday, easter + timedelta(days=1), {"easter", _MONTH_NAMES[easter.month - 1]}))

    def monday(month: int, n: int, *words: str) -> None:
        day = nth_weekday(year, month, 0, n)
        out.append((day - timedelta(days=2), day, {_MONTH_NAMES[month - 1], *words}))

    if where == "IE":
        brigid = date(year, 2, 1) if date(year, 2, 1).weekday() == 4 else nth_weekday(year, 2, 0, 1)
        out.append(_off(brigid, brigid, {"february"}, where))
        out.append(_off(date(year, 3, 17), date(year, 3, 17), {"march", "patrick"}, where))
        for month, n in ((5, 1), (6, 1), (8, 1), (10, -1)):
            monday(month, n, *(["summer"] if month == 8 else []))
    elif where == "GB":
        monday(5, 1, "early")
        monday(5, -1, "late", "spring")
        monday(8, -1, "summer")
    elif where == "CA":
        monday(2, 3)  # Family Day, in most provinces
        victoria = nth_weekday(year, 5, 0, -1, before=25)
        out.append((victoria - timedelta(days=2), victoria, {"may"}))  # Victoria Day
        out.append(_off(date(year, 7, 1), date(year, 7, 1), {"july"}, where))
        monday(8, 1, "summer")  # the civic holiday
        monday(9, 1)
        monday(10, 2)
    else:
        monday(1, 3)
        monday(2, 3)
        monday(5, -1)
        out.append(_off(date(year, 6, 19), date(year, 6, 19), {"june"}, where))  # Juneteenth
        out.append(_off(date(year, 7, 4), date(year, 7, 4), {"july"}, where))
        monday(9, 1)
        thanksgiving = nth_weekday(year, 11, 3, 4)
        out.append((thanksgiving, thanksgiving + timedelta(days=3), {"november", "thanksgiving"}))
    return sorted(out, key=lambda x: x[0])


def _off(first: date, last: date, words: set[str], where: str) -> tuple[date, date, set[str]]:
    """The days off that holidays `first` to `last` give: one on a weekend is observed on the
    next weekday (the United States: a Saturday's on the Friday before), and a weekend next to
    them is part of them."""
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    if where == "US":
        shift = {5: -1, 6: 1}  # Saturday's on the Friday, Sunday's on the Monday
        days = [d + timedelta(days=shift.get(d.weekday(), 0)) for d in days]
        start, end = min(days), max(days)
    else:
        start, end = first, last
        owed = sum(d.weekday() >= 5 for d in days)
        while owed:
            end += timedelta(days=1)
            owed -= end.weekday() < 5
    start -= timedelta(days={0: 2, 6: 1}.get(start.weekday(), 0))  # from the Saturday before
    end += timedelta(days={4: 2, 5: 1}.get(end.weekday(), 0))  # to the Sunday after
    return start, end, words


def touches_weekend(first: date, last: date) -> bool:
    """Whether a Saturday or a Sunday is among the days `first` to `last`."""
    return any((first + timedelta(days=n)).weekday() >= 5 for n in range((last - first).days + 1))


def _days(n: str, span: str, year: int, where: str) -> Days | None:
    """The days of the named day `n` (a `normal` name) in `year` for a user in `where`; `span`
    "weekend" / "bank holiday" its long weekend, "break" / "holidays" its holidays, else the days
    the name is said of ("Christmas": Christmas Eve to Boxing Day, "Easter": Good Friday to
    Easter Monday, "New Year's": its Eve and Day)."""
    easter = _easter(year)
    thanksgiving_us = nth_weekday(year, 11, 3, 4)
    if n in _FIXED:
        main = first = last = date(year, *_FIXED[n])
    elif n == "christmas":
        main, first, last = date(year, 12, 25), date(year, 12, 24), date(year, 12, 26)
    elif n == "new years":
        main, first, last = date(year, 1, 1), date(year - 1, 12, 31), date(year, 1, 1)
    elif n == "easter":
        main, first, last = easter, easter - timedelta(days=2), easter + timedelta(days=1)
    elif n in _FROM_EASTER:
        if n == "mardi gras" and where == "AU":
            return None  # Sydney's is a parade in February or March
        main = first = last = easter + timedelta(days=_FROM_EASTER[n])
    elif n == "independence day":
        if where not in ("US", ""):
            return None  # every country has its own
        main = first = last = date(year, 7, 4)
    elif n == "mothers day":
        main = first = last = (
            easter - timedelta(days=21) if where in ("GB", "IE") else nth_weekday(year, 5, 6, 2)
        )
    elif n == "fathers day":
        main = first = last = (
            nth_weekday(year, 9, 6, 1) if where in ("AU", "NZ") else nth_weekday(year, 6, 6, 3)
        )
    elif n in ("thanksgiving", "thanksgiving day"):
        main = first = last = nth_weekday(year, 10, 0, 2) if where == "CA" else thanksgiving_us
        if where == "CA" and n == "thanksgiving":
            first = main - timedelta(days=2)  # the weekend its dinner is eaten in
    elif n == "black friday":
        main = first = last = thanksgiving_us + timedelta(days=1)
    elif n == "memorial day":
        main = first = last = nth_weekday(year, 5, 0, -1)
    elif n in ("labour day", "labor day"):
        if where == "AU":
            return None  # a different day in each state
        main = first = last = {
            "US": nth_weekday(year, 9, 0, 1), "CA": nth_weekday(year, 9, 0, 1),
            "": nth_weekday(year, 9, 0, 1), "NZ": nth_weekday(year, 10, 0, 4),
            "GB": nth_weekday(year, 5, 0, 1), "IE": nth_weekday(year, 5, 0, 1),
        }.get(where, date(year, 5, 1))  # fmt: skip
    elif n == "victoria day":
        main = first = last = nth_weekday(year, 5, 0, -1, before=25)
    else:
        return None
    if n in ("christmas", "christmas day") and span and "weekend" not in span and "bank" not in span:
        if year + 1 >= MAXYEAR:
            return None
        return date(year, 12, 24), date(year + 1, 1, 1), main  # the Christmas holidays, to New Year's Day
    if n == "easter" and span and "weekend" not in span and "bank" not in span:
        return easter - timedelta(days=9), easter + timedelta(days=8), main  # Easter's fortnight
    if span:  # its long weekend: the country's days off that hold it, else Saturday to a Monday,
        # a Thursday or Friday to Sunday
        for start, end, _ in long_weekends(year, where):
            if start <= main <= end:
                return start, end, main
        if n == "easter":
            return first, last, main
        weekday = main.weekday()
        if weekday == 0:
            return main - timedelta(days=2), main, main
        if weekday in (3, 4):
            return main, main + timedelta(days=6 - weekday), main
        if weekday >= 5:
            return main - timedelta(days=weekday - 5), main + timedelta(days=6 - weekday), main
    return first, last, main


def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l = (32 + 2 * e + 2 * i - h - k) % 7  # noqa: E741 (the algorithm's name)
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    return date(year, month, day + 1)


def nth_weekday(year: int, month: int, weekday: int, n: int, *, before: int | None = None) -> date:
    """The n-th `weekday` (Monday 0) of a month, n = -1 the last; with `before`, the last one
    before that day of the month (Victoria Day: the Monday before May 25)."""
    if before is not None:
        day = date(year, month, before - 1)
        return day - timedelta(days=(day.weekday() - weekday) % 7)
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (date(year, month, 28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
# A weekday as people write it in a hurry: "Tues", "Thurs.", "Fri"; the short forms that are
# words or names too ("Mon", "Wed", "Sat", "Sun", "Thu") only capitalised, after "on", "last",
# "next", "this", "was" or "is", and not before another name ("op on Wed": not "sat in the
# sun", "Thu came round", "on Sat Nav duty").
_WEEKDAY = (
    rf"{'|'.join(WEEKDAYS)}|tues?|thurs?|fri|weds"
    r"|(?:(?<=\bon\s)|(?<=\blast\s)|(?<=\bnext\s)|(?<=\bthis\s)|(?<=\bwas\s)|(?<=\bis\s))"
    r"(?-i:Mon|Wed|Sat|Sun|Thu)(?!\s+(?-i:(?!(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec))[A-Z][a-z]))"
)
# A month by its name or the short form people write: not "mar" or "dec" at the start of
# another word ("married", "decided"), nor "may", "march" or "august" uncapitalised ("we may
# 3D-print it", "we march 10 miles").
_MONTH_NAME = (
    r"(?:january|jan|february|feb|(?-i:March|Mar)|april|apr|(?-i:May)|june|jun|july|jul|(?-i:August)|aug|"
    r"september|sept|sep|october|oct|november|nov|december|dec)\b"
)
# A day a sentence says something happens on, counted from when it was said: "the operation
# was on Tuesday", "the Cycle Tour is this Sunday", "injection booked for Thursday 24th",
# "the party is Saturday Aug 8", "the op is on 24 July", "op was Tues", "the party last night".
# Not a habit ("every Saturday", "every other Tuesday", "Sundays"), a kind of day ("the Saturday
# brunch crowd", "a Sunday off"), a named day ("Good Friday", "Easter Monday": the calendar's,
# above), the start of a span ("off work from Monday"), "Sunday's paper", nor "the day before
# yesterday"; of a span of dates ("22–28 Dec"), its first.
_DAY_SAID = _Lazy(
    r"(?<!\bevery\s)(?<!\beach\s)(?<!\bother\s)(?<!\bthe\s)(?<!\ba\s)(?<!\bfrom\s)"
    r"(?<!\bgood\s)(?<!\bblack\s)(?<!\beaster\s)(?<!\bpalm\s)(?<!\bash\s)(?<!\bmaundy\s)(?<!\bholy\s)"
    r"(?<!\bsuper\s)(?<!\bcyber\s)(?<!\bshrove\s)(?<!\bwhit\s)(?<!\bmothering\s)(?<!\bremembrance\s)"
    rf"\b(?:(?P<which>last|next|this\s+coming|this\s+past|this)\s+)?(?P<weekday>{_WEEKDAY})\b\.?"
    r"(?!['’]?s\b)(?!\s+(?:mornings|afternoons|evenings|nights)\b)"
    rf"(?:,?\s+(?:the\s+)?(?P<dom>\d{{1,2}})(?:(?:st|nd|rd|th)\b|(?=\s+{_MONTH}))"
    rf"|,?\s+{_MONTH}\.?\s+(?P<dom2>\d{{1,2}})\b)?"
    # a date with no weekday: "on 24 July", "the 3rd of August", "Aug 8th", "July 24, 2026", a
    # span's first ("22–28 Dec"); not "$24 July special", "3/4 of June", "Jan 3 times"
    r"|(?<![$£€#/.:])\b(?:(?P<first>\d{1,2})(?:st|nd|rd|th)?\s*(?:-|–|—|to|until|till|through|thru|and)"
    r"\s*(?:the\s+)?)?"
    rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?!/)\s+(?:of\s+)?(?P<month>{_MONTH_NAME})\.?(?:,?\s+(?P<year>\d{{4}})\b)?"
    rf"|\b(?P<month2>{_MONTH_NAME})\.?\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\b(?![:.]?\d|\s*(?:%|am\b|pm\b))"
    r"(?!\s+(?:times?|weeks?|days?|months?|years?|yrs?|hours?|hrs?|mins?|minutes?|miles?|km|kms|kilos?|kg|lbs?"
    r"|pounds|stone|tickets?|people|kids|children|stars?|of\b|more\b|others?\b))"
    r"(?:,?\s+(?P<year2>\d{4})\b)?"
    # not "the day before yesterday", "after tomorrow", "after yesterday's row we made up"; but
    # "stiff after yesterday" tells of it
    r"|(?<!\bbefore\s)(?:(?<!\bafter\s)|(?=(?:yesterday|last\s+night)(?!['’]s)))"
    r"\b(?P<relative>yesterday|last\s+night|tomorrow|tonight|today|this\s+(?:morning|afternoon|evening))\b",
    re.I,
)
_RELATIVE_DAYS = {"yesterday": -1, "last night": -1, "tomorrow": 1}
# A date with no year that the sentence does not tell is to come is the one this near the day
# said, whatever the tense ("Closing date 15 May."), else none: written in July, "I was
# training for a half on 6 Dec" may be the one gone or the one to come.
DATE_NEAR = timedelta(days=60)
_SAME_DAY = ("today", "tonight", "this morning", "this afternoon", "this evening")
# The irregular pasts a person tells of what they did ("went", "bought", "swam"): none of them
# also a present ("read", "put") nor said of a day to come ("I get paid on Friday", "kept for
# Sunday"); a pattern that uses them groups them (`(?:…)`)
TOLD_PAST = (
    r"was|were|went|had|did|got|came|said|told|wrote|saw|met|heard|left|began|took|gave|sent|spent|"
    r"rode|ran|drove|flew|ate|slept|made|bought|sold|won|lost|caught|built|brought|found|felt|fell|"
    r"wore|woke|swam|sang|drank|dug|threw|broke"
)
# What tells a bare weekday's side of the day said: "was on Tuesday" happened, "is on Sunday"
# and "booked for Thursday" are to come; the words just before the day first ("the knee
# replacement was on Monday and the surgeon is pleased"), else the sentence's. Both or
# neither: it cannot be told, and is not read.
_HAPPENED = _Lazy(
    rf"\b(?:{TOLD_PAST}|happened|rang|phoned|called|arrived|started|finished|ended|"
    # what people tell of a day they did things ("made €140 on Saturday with a stall", "worked
    # two doubles this weekend", "helped my cousin move on Sunday")
    # (not "I get paid on Friday", "packed lunches on Friday", "worked out we leave on Saturday")
    r"worked(?!\s+out)|helped|played|visited|painted|cooked|cleaned|walked|hiked|watched|"
    r"stayed|tried|cycled|travell?ed|camped|danced|attended|volunteered|fixed|shopped|baked|hosted|"
    r"celebrated|enjoyed|missed|raced|climbed|fished|trained|competed|performed|tidied|repaired|"
    r"planted|mowed|decorated|washed|unpacked"
    # and any other regular past the user tells of doing ("On Saturday I hauled the lot to the
    # auction house"), but the words of a wish, a plan or a habit ("I wanted to go on Saturday")
    r"|(?:(?<=\bI\s)|(?<=\bwe\s))(?!(?:wanted|hoped|needed|planned|booked|decided|agreed|promised|arranged|"
    r"intended|used|expected|scheduled|offered|asked|wished|preferred|considered|reserved|ordered|signed)\b)"
    r"(?![a-z]*eed\b)[a-z]{2,}ed)\b",  # (not "I need", "we feed")
    re.I,
)
# "Made a booking for Saturday", "bought a dress for the weekend": a day something was bought,
# made or booked for (`_AHEAD`) is no day it was done on ("went to Wales for the weekend" is).
_FOR_A_DAY = _Lazy(r"\bfor\s+(?:(?:this|next|the|this\s+coming)\s+)?$", re.I)
_TO_COME = _Lazy(
    r"\b(?:will|shall|is|are|am|going\s+to|booked|due|scheduled|planned)\b|['’]ll\b"
    r"|['’](?:m|re)\s+(?:\w+ing|due|booked|off\s+to|in\s+for|set\s+for|scheduled)\b|\b(?:it|that)['’]s\b",
    re.I,
)
# "moved to Friday", "postponed till Friday", "rebooked for Friday": the new day is to come,
# whatever the tense of the moving.
_MOVED_TO = _Lazy(
    r"\b(?:moved|postponed|rescheduled|pushed(?:\s+back)?|put\s+back|put\s+off|rebooked|"
    r"brought\s+forward|changed|delayed)\s+(?:\S+\s+){0,3}?(?:to|till|until|for)\s+$",
    re.I,
)
# "not Monday", "wasn't on Monday", "thought it was Monday but…", "meant to be Monday", "Monday
# or Tuesday": a day denied, or one of two, is not the day.
_DENIED = _Lazy(
    r"(?:\bnot|n['’]t)\s+(?:on\s+|be\s+|the\s+)?$|\b(?:thought|meant\s+to\s+be|supposed\s+to\s+be|"
    r"would\s+have\s+been|should\s+have\s+been|instead\s+of|rather\s+than|either)\b"
    r"|\bor\s+(?:maybe\s+)?(?:on\s+)?(?:the\s+)?$|\bno\s+longer\s+(?:on\s+)?$",
    re.I,
)
_OR = _Lazy(r"^\s+or\b", re.I)
# A date that is a bound or a habit, not the day: "back by 24 July", "after 3 Aug", "until",
# "since", "every year on"; "from 24 July" alone (the day moved from; "from 3 to 9 Aug" is a
# span, read by its first).
_BOUND = _Lazy(
    r"\b(?:by|before|after|until|till|til|since|every(?:\s+(?:year|month))?(?:\s+on)?|each|from|"
    r"no\s+later\s+than)\s+(?:the\s+)?$",
    re.I,
)
# A date told of as gone by, whatever the tense: "sore from the half on 10 May", "recovering
# after her op on 1 May", "glad the exam on 10 March is over" (read in July: not next year's).
_PAST_REF = _Lazy(r"\b(?:after|since|from|about|over|done|remember)\b", re.I)
_WORD = _Lazy(r"[a-z0-9'’]+")
_CLAUSE_END = _Lazy(r"[,;:()—–]|\s-\s|\b(?:but|and|then|though|although|because|so)\b", re.I)


def day_said(sentence: str, said_at: datetime, zone: tzinfo = UTC, near: Collection[str] = ()) -> date | None:
    """The day `sentence` says its event happens on, read against the day it was said in
    `zone`'s days ("the operation was on Tuesday", said on a Thursday: two days before), or
    None where it names no day or the day cannot be told: a wrong day is worse than none, which
    counts from the day said. Of several days, the one nearest a word of `near` (the event's:
    "home today, the knee op was Tuesday": the Tuesday), else the first that is not the day said.
    A weekday with its day of the month ("Thursday 24th") is the date near the day said that is
    both; a date ("on 24 July") is read by `_dated`; a bare weekday's side is read from the
    tense; the weekday of the day said itself, and "next Friday" said in Friday's own week, are
    left unread (this one or the one after?)."""
    found = [
        m
        for m in _DAY_SAID.finditer(sentence)
        if not _DENIED.search(_clause(sentence, m)[0])
        and not _OR.match(sentence[m.end() :])
        and not _bound(sentence, m)
    ]
    at = [w.start() for w in _WORD.finditer(sentence.lower()) if w.group(0) in near]
    if at:
        found.sort(key=lambda m: min(abs(m.start() - a) for a in at))
    else:
        found.sort(key=lambda m: " ".join((m["relative"] or "").lower().split()) in _SAME_DAY)
    if not found:
        return None
    m = found[0]
    said = said_at.astimezone(zone).date()
    if m["relative"]:
        return said + timedelta(days=_RELATIVE_DAYS.get(" ".join(m["relative"].lower().split()), 0))
    if m["month"] or m["month2"]:
        day = m["first"] or m["day"] or m["day2"]
        ahead = _side(sentence, m)
        if ahead and _PAST_REF.search(" ".join(_clause(sentence, m))):
            ahead = None  # "sore from the half on 10 May", "glad the exam on 10 March is over"
        return _dated(said, m["month"] or m["month2"], day, m["year"] or m["year2"], ahead)
    which = " ".join((m["which"] or "").lower().split())
    weekday = next(n for n, name in enumerate(WEEKDAYS) if name.startswith(m["weekday"].lower()[:3]))
    if dom := m["dom"] or m["dom2"]:  # the date within six weeks either side that is both
        days = [said + timedelta(days=n) for n in range(-42, 43)]
        fits = [d for d in days if d.weekday() == weekday and d.day == int(dom)]
        return min(fits, key=lambda d: abs((d - said).days)) if fits else None
    ahead = {"last": False, "this past": False, "next": True, "this coming": True}.get(which)
    if ahead is None:
        ahead = _side(sentence, m)
    if ahead is None:
        return None
    if ahead:
        forward = (weekday - said.weekday()) % 7
        if not forward:  # its own weekday: "this Sunday", said that Sunday, is the day itself
            return said if which == "this" else said + timedelta(days=7) if which else None
        if which == "next" and weekday > said.weekday():
            return None  # "next Friday", said that Thursday: tomorrow, or the week after?
        return said + timedelta(days=forward)
    back = (said.weekday() - weekday) % 7
    if not back:
        return said if which == "this" else said - timedelta(days=7) if which else None
    return said - timedelta(days=back)


# A month named alone as a time ("our trip to Seville in March", "we move next June"): not a
# date ("on 24 July": `day_said`), a bound ("by March"), a habit ("every March"), a thing of a
# month ("March's rent"), nor one with its year ("in March 2028", "of 2028", "'28": another's tale)
# or one of two ("in March or April").
_MONTH_ALONE = _Lazy(
    r"\b(?:(?:in|during)\s+(?:(?:early|late|mid)[\s-]+)?|(?P<which>next|this\s+coming|coming|this)\s+)"
    rf"(?P<month>{_MONTH_NAME})\.?(?!,?\s*(?:of\s+)?['’]?\d)(?!['’]s\b)(?!\s+or\b)",
    re.I,
)
# A month plans only the user's own ("I", "we", "my", "our"), said as a plan, not asked ("is
# Seville too hot in August?"), denied, called off or in doubt ("we're not going in March after
# all", "the trip in March is off", "not sure if we're going"), gone by ("recovering from the
# marathon in October", "I'll never forget our trip in March") or a habit ("every year").
_MINE = _Lazy(r"(?-i:\bI\b)|\bi['’]|\b(?:we|my|our|me|us)\b", re.I)
_NO_PLAN = _Lazy(
    r"\b(?:not|never|no\s+longer|cancell?ed|called\s+off|is\s+off|fell\s+through|after\s+all|if|whether|maybe|"
    r"might|unless|every|each|usually|always)\b|n['’]t\b",
    re.I,
)
_GONE_BY = _Lazy(r"\b(?:from|since|after|remember|forget|recovering|over)\b", re.I)  # (in its clause)
_NEXT_YEAR = _Lazy(r"\s*,?\s*next\s+year\b", re.I)


def months_planned(sentence: str, said_at: datetime, zone: tzinfo = UTC) -> list[tuple[date, date]]:
    """The months to come `sentence` names alone as the time of the user's plan, each as its
    first day and the first of the next, read against the day it was said in `zone` ("booked
    flights for our trip to Seville in March", said in November: next March; "next May", said
    in May, or "in March next year": a year on). A month whose side the tense does not tell
    ("Seville in March!"), gone by, in a question, another's, or in a sentence that denies, calls
    off or doubts (`_NO_PLAN`) is left out: a false plan is worse than none."""
    if sentence.rstrip().endswith("?") or _NO_PLAN.search(sentence):
        return []
    said = said_at.astimezone(zone).date()
    out = []
    for m in _MONTH_ALONE.finditer(sentence):
        before, after = _clause(sentence, m)
        which = " ".join((m["which"] or "").lower().split())
        if not _MINE.search(f"{before} {after}") or _GONE_BY.search(f"{before} {after}"):
            continue
        if not (which in ("next", "coming", "this coming") or _side(sentence, m)):
            continue
        month = _month_number(m["month"])
        year = said.year + (month < said.month or (month == said.month and which == "next"))
        if _NEXT_YEAR.match(sentence[m.end() :]) and year == said.year:
            year += 1  # ("in March next year", said in January)
        out.append((date(year, month, 1), date(year + month // 12, month % 12 + 1, 1)))
    return out


# A weekend said: "last weekend", "this past weekend", "the weekend just gone" (the one gone
# by; not "the last weekend in June", "last weekend but one"); "next weekend", "this (coming)
# weekend" (next week's, the coming one; "this weekend was the wedding", said on the Monday, the
# one gone); "the weekend", "at / over the weekend", "the whole weekend" by the verb just before
# ("spent the weekend at the zine fair", "went to Bath at the weekend"; "I'll do it at the
# weekend") or, leading its clause, just after ("over the weekend I went…"); not "the weekend
# before / after / of the 4th", counted from another day, nor "a weekend's", a habit's.
_WEEKEND = _Lazy(
    r"(?<!\bthe\s)(?<!\bmy\s)(?<!\bour\s)(?<!\ba\s)\b(?:"
    r"(?P<gone>(?:the|this)\s+weekend\s+(?:just\s+)?gone|(?P<last>last|this\s+past|the\s+past)\s+weekend)"
    r"|(?P<which>this\s+coming|the\s+coming|this|next)\s+weekend"
    r"|(?:the\s+(?:whole\s+|entire\s+)?|all\s+)weekend)\b(?P<its>['’]s\b)?"
    r"(?!\s+(?:before|after|of|but|shifts?|jobs?|rota)\b|\s*[-–])",
    re.I,
)
# What is not done then, whatever past word stands beside a weekend: "I've got the kids at the
# weekend", "Jen was coming at the weekend", "asked if I was free at the weekend", "he'd be
# away"; a habit or another year's ("we always went swimming at the weekend", "back in 2019").
_NOT_DONE = _Lazy(
    r"['’]ve\s+got|\bha(?:ve|s)\s+got|\b(?:was|were)\s+\w+ing\b|\b(?:if|whether|would|could|can|might|hope)\b"
    r"|['’]d\b|\bwait\b|\b(?:always|never|usually|often|every|used\s+to|back\s+in|(?:19|20)\d\d)\b",
    re.I,
)
# A weekend as a bound ("by the weekend", "after the weekend") is not its time; one come from
# ("recovering from the weekend", "since the weekend") is gone by, as is one gone by that the
# day is after ("stiff today after the weekend just gone, I walked the coast path", "back in
# Kraków after last weekend in Prague": what it tells comes from that weekend).
_WEEKEND_BOUND = _Lazy(r"\b(?:by|before|after|until|till|til)\s+$", re.I)
_AFTER = _Lazy(r"\bafter\s+$", re.I)
# (not "the Monday after last weekend", "the week after": a time counted from it)
_COUNTED_AFTER = _Lazy(
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|day|week|night|morning|evening)\s+after\s+$", re.I
)
_WEEKEND_FROM = _Lazy(r"\b(?:from|since)\s+$", re.I)


def weekends_said(sentence: str, said_at: datetime, zone: tzinfo = UTC) -> list[date]:
    """The Saturdays of the weekends `sentence` names, read against the day it was said in
    `zone` ("the weekend just gone I had a stall at the flea market", said on a Monday: the
    Saturday two days before; "the hen do is this weekend": the coming one; "rain all weekend,
    so I moved the bbq to next weekend": the one moved to first, then the coming one). A weekend
    that cannot be told is left out: one gone by named on its own Saturday or Sunday but "last
    weekend" (this one, or the one before?), "the weekend" where the words beside it tell no
    tense, a past word beside what was not done ("I've got the kids at the weekend"). A wrong
    weekend is worse than none."""
    found = list(_WEEKEND.finditer(sentence))
    found.sort(key=lambda m: not _MOVED_TO.search(sentence[: m.start()]))  # the day moved to first
    return [day for m in found if (day := _weekend(sentence, m, said_at.astimezone(zone).date()))]


def _weekend(sentence: str, m: re.Match[str], said: date) -> date | None:
    """The Saturday of the weekend `m` names in `sentence`, said on `said` (`weekends_said`)."""
    saturday = said + timedelta(days=5 - said.weekday())  # this week's (on a Sunday: yesterday)
    before, after = _clause(sentence, m)
    ahead_of = sentence[: m.start()]
    come_from = m["gone"] and _AFTER.search(ahead_of) and not _COUNTED_AFTER.search(ahead_of)
    bound = _WEEKEND_BOUND.search(ahead_of) and not come_from
    if _DENIED.search(before) or bound:
        return None
    which = " ".join((m["which"] or "").lower().split())
    ahead: bool | None
    if m["gone"]:
        if said.weekday() < 5:
            return saturday - timedelta(days=7)
        return saturday - timedelta(days=7) if m["last"] and m["last"].lower() == "last" else None
    if _MOVED_TO.search(sentence[: m.start()]) or which == "next" or (which and m["its"]):
        ahead = True  # (and "cancelled this weekend's trip": the coming one's)
    elif _WEEKEND_FROM.search(sentence[: m.start()]):
        ahead = False
    else:
        near = [w for w in before.split() if w.lower() not in ("over", "at", "on", "during")]
        if not near:  # (leading its clause, "over the weekend, I went…": the words after)
            near = next((c.split()[:3] for c in _CLAUSE_END.split(sentence[m.end() :]) if c.strip()), [])
        ahead = None if _NOT_DONE.search(f"{before} {after}") else _ahead(near)
        if ahead is False and _for_a_day(sentence, m):
            ahead = None  # ("bought a dress for the weekend": what it is for)
        if ahead is None and which:
            # ("this weekend" told of no tense: the coming one, but on the Monday after it)
            ahead = True if said.weekday() != 0 else None
    if ahead is None:
        return None
    if ahead:
        later = which == "next" or (not which and said.weekday() == 6)  # (on a Sunday: the next)
        return saturday + timedelta(days=7 if later else 0)
    if which:  # ("this weekend was the wedding": the one gone, or this one, said on it)
        return saturday if said.weekday() >= 5 else saturday - timedelta(days=7)
    if said.weekday() == 5:
        return None  # (said on a Saturday: this one, or the last?)
    return saturday if said.weekday() == 6 else saturday - timedelta(days=7)


def _bound(sentence: str, m: re.Match[str]) -> bool:
    """A date that is a bound or a habit ("by 24 July", "from 24 July" alone), not a day."""
    if not (m["month"] or m["month2"]) or not _BOUND.search(sentence[: m.start()]):
        return False
    return not (m["first"] and sentence[: m.start()].rstrip().lower().endswith(("from", "from the")))


def _side(sentence: str, m: re.Match[str]) -> bool | None:
    """Whether the day `m` is to come (True) or past (False) by the words of its sentence: moved
    to it ("moved to Friday"), else the tense of the words just before it, else its clause's."""
    if _MOVED_TO.search(sentence[: m.start()]):
        return True
    before, after = _clause(sentence, m)
    ahead = _ahead(before.split()[-3:])
    if ahead is None:
        ahead = _ahead([*before.split(), *after.split()])
    return None if ahead is False and _for_a_day(sentence, m) else ahead


def _for_a_day(sentence: str, m: re.Match[str]) -> bool:
    """Whether the day `m` is one something was bought, made or booked for ("made a booking for
    Saturday"), not one it was done on (`_FOR_A_DAY`)."""
    return bool(_FOR_A_DAY.search(sentence[: m.start()]) and _AHEAD.search(_clause(sentence, m)[0]))


def _dated(said: date, month_name: str, day: str, year: str | None, ahead: bool | None) -> date | None:
    """The date a sentence names ("on 24 July"): in its year; with none, the next when the
    sentence tells of what is to come ("the half is on 6 Dec", written in April; "my next
    check-up is on 15 Nov", written on 30 December), else the nearest within DATE_NEAR of the
    day said, whatever the tense ("Closing date 15 May.", "it was 22 April" of tomorrow's
    appointment, cancelled); None where there is no such day ("31 June") or it cannot be told
    ("I was training for a half on 6 Dec", written in July: the one gone, or to come?)."""
    month = _month_number(month_name)
    years = [int(year)] if year else [said.year - 1, said.year, said.year + 1]
    fits = []
    for y in years:
        try:
            fits.append(date(y, month, int(day)))
        except ValueError:
            continue
    if year or not fits:
        return fits[0] if fits else None
    if ahead:
        return min((d for d in fits if d >= said), default=None)
    near = min(fits, key=lambda d: abs((d - said).days))
    return near if abs((near - said).days) <= DATE_NEAR.days else None


def _month_number(name: str) -> int:
    """The month a name or its abbreviation names, 1 to 12 ("Sept", "march": 9, 3)."""
    return next(n for n, full in enumerate(_MONTH_NAMES, 1) if full.startswith(name.lower()[:3]))


def _clause(sentence: str, m: re.Match[str]) -> tuple[str, str]:
    """The words of the clause holding `m` before it and after it ("Op wasn't Monday, it was
    Tuesday": for Tuesday, "it was" and nothing)."""
    before = _CLAUSE_END.split(sentence[: m.start()])[-1]
    after = _CLAUSE_END.split(sentence[m.end() :])[0]
    return before, after


def _ahead(words: list[str]) -> bool | None:
    """Whether `words` tell of what is to come (True) or has happened (False); None when they
    tell both or neither."""
    text = " ".join(words)
    happened, to_come = bool(_HAPPENED.search(text)), bool(_TO_COME.search(text))
    return None if happened == to_come else to_come
