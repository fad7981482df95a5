"""The built-in calibration set of `dcpm dream --calibrate`: hand-written, in the style of
dcpm's own extraction and abstraction prompts, shipped with the package (no download).

- THEMES: facts grouped by theme, several themes per life domain. Facts of one theme should
  fall in one DBSCAN neighbourhood; facts of sibling themes (same domain) and of other
  domains should not. Calibrates eps₁ (and eps₂ in proportion).
- PATTERNS: within-domain schemas with the behavioural description an abstractor would
  write, grouped by the behavioural pattern they share across domains. Two schemas of one
  pattern from different domains are a *collision* (alike in behaviour, unlike in meaning);
  schemas of different patterns and domains are *unrelated*. Calibrates θ_beh.
- REDUNDANT: pairs that say the same thing in other words (high in both spaces), which the
  collision test must not flag. Calibrates θ_sem.

The paper's own example (a wellness schema against a gardening/teaching schema) is kept
out of this set on purpose: the tests use it as a held-out check of the thresholds.
"""

from __future__ import annotations

# (domain, theme, facts)
THEMES: list[tuple[str, str, list[str]]] = [
    (
        "work",
        "late nights before deadlines",
        [
            "Works late into the night before project deadlines",
            "Stayed up until 2am to finish the quarterly report before it was due",
            "Pulled an all-nighter to finish the client proposal before the deadline",
            "Often works past midnight in the week before a product launch deadline",
            "Finished the grant application at 3am, an hour before the deadline",
        ],
    ),
    (
        "work",
        "meetings overload",
        [
            "Has back-to-back meetings most days and no time for focused work",
            "Spent the whole Tuesday in meetings and did no real work",
            "Feels that too many meetings eat the working day",
            "Blocks Friday mornings in the calendar to escape meetings",
            "Declined three recurring meetings to get time for focused work",
        ],
    ),
    (
        "sleep",
        "insomnia",
        [
            "Lies awake for hours unable to fall asleep",
            "Wakes up at 4am and cannot get back to sleep",
            "Has had trouble falling asleep for several weeks",
            "Slept only four hours last night because of insomnia",
            "Tried melatonin because falling asleep takes so long",
        ],
    ),
    (
        "sleep",
        "naps",
        [
            "Takes a twenty-minute nap after lunch most days",
            "Naps on the sofa on Sunday afternoons",
            "Feels refreshed after a short afternoon nap",
            "Sets an alarm so that afternoon naps stay under half an hour",
            "Took a power nap in the car before driving home",
        ],
    ),
    (
        "food",
        "vegetarian cooking",
        [
            "Cooks vegetarian dinners at home most evenings",
            "Made a lentil and spinach curry for dinner",
            "Has been trying new vegetarian recipes from a cookbook",
            "Cooked a chickpea stew instead of meat for the family",
            "Prepares tofu stir-fry for dinner once a week",
        ],
    ),
    (
        "food",
        "coffee",
        [
            "Drinks three cups of coffee every morning",
            "Cannot start the day without a strong espresso",
            "Switched to decaf coffee after 2pm",
            "Buys freshly roasted coffee beans every week",
            "Had four coffees today to get through the afternoon",
        ],
    ),
    (
        "fitness",
        "running",
        [
            "Runs five kilometres before breakfast three times a week",
            "Ran a new personal best in the 10k race on Sunday",
            "Goes for a long run every Saturday morning",
            "Is training for a half marathon in the spring",
            "Bought new running shoes after the old pair wore out",
        ],
    ),
    (
        "fitness",
        "yoga",
        [
            "Goes to a yoga class on Wednesday evenings",
            "Does twenty minutes of yoga stretches every morning",
            "Joined a hot yoga studio near the office",
            "Finds that yoga helps with back pain",
            "Practised yoga poses at home following an online video",
        ],
    ),
    (
        "family",
        "visiting parents",
        [
            "Visits her parents every other Sunday for lunch",
            "Drove three hours to see his mother for her birthday",
            "Calls her father every evening since he moved into a care home",
            "Spends the summer holidays at the parents' house by the lake",
            "Helped his parents move into a smaller flat",
        ],
    ),
    (
        "family",
        "children's school",
        [
            "Helps the kids with their homework every evening",
            "Went to the parent-teacher meeting at the primary school",
            "Worries that her son is falling behind in maths at school",
            "Volunteers at the school library once a week",
            "Takes the children to school by bike every morning",
        ],
    ),
    (
        "money",
        "saving",
        [
            "Puts ten percent of every paycheck into a savings account",
            "Is saving up for a deposit on a flat",
            "Cancelled streaming subscriptions to save money",
            "Tracks every expense in a budgeting app",
            "Moved savings into a high-interest account",
        ],
    ),
    (
        "hobbies",
        "photography",
        [
            "Takes photos of birds in the park with a telephoto lens",
            "Bought a second-hand mirrorless camera",
            "Edits holiday photos in Lightroom on weekends",
            "Joined a local photography club",
            "Entered a landscape photo in a competition",
        ],
    ),
]

# pattern → [(domain, schema text, behavioural description)]
PATTERNS: dict[str, list[tuple[str, str, str]]] = {
    "sunk cost": [
        (
            "money",
            "Keeps pouring savings into the struggling café because so much has already been invested in it",
            "Escalates commitment to a failing course of action because of what was already spent on it",
        ),
        (
            "fitness",
            "Keeps training for the marathon through a knee injury because months of training are behind him",
            "Persists with a plan that no longer works, unwilling to waste the effort already sunk into it",
        ),
    ],
    "deadline-driven procrastination": [
        (
            "work",
            "Starts big reports only the night before they are due",
            "Delays demanding tasks until the pressure of an imminent deadline forces action",
        ),
        (
            "home",
            "Leaves tax paperwork and bills until the last possible day",
            "Postpones effortful obligations until external pressure compels them at the last moment",
        ),
        (
            "learning",
            "Crams for language exams in the two days before the test",
            "Puts off sustained effort and relies on a last-minute burst when time runs out",
        ),
    ],
    "perfectionism": [
        (
            "food",
            "Remakes a dish several times until it looks exactly like the photo in the recipe",
            "Cannot let go of a result until it meets an exacting, self-imposed standard",
        ),
        (
            "work",
            "Rewrites every email many times before sending it",
            "Repeats and polishes output obsessively, unable to accept anything short of flawless",
        ),
    ],
    "exhaustive research": [
        (
            "travel",
            "Spends weeks comparing hotels and flights before booking any trip",
            "Gathers exhaustive information and compares every option before committing to a decision",
        ),
        (
            "home",
            "Reads dozens of reviews before buying any household appliance",
            "Researches alternatives at length to avoid making the wrong choice before deciding",
        ),
    ],
    "people-pleasing": [
        (
            "work",
            "Agrees to cover colleagues' shifts even when exhausted",
            "Puts other people's requests ahead of own limits to avoid disappointing anyone",
        ),
        (
            "family",
            "Hosts every family holiday even though it leaves her drained",
            "Says yes to others' expectations at personal cost rather than risk letting them down",
        ),
    ],
    "novelty seeking": [
        (
            "food",
            "Orders a dish she has never tried at every restaurant",
            "Seeks out new experiences and avoids repeating the familiar",
        ),
        (
            "hobbies",
            "Picks up a new hobby every few months and drops the previous one",
            "Is drawn to novelty and loses interest once something becomes routine",
        ),
    ],
    "fixed routine": [
        (
            "sleep",
            "Goes to bed at exactly half past ten every night, weekends included",
            "Relies on fixed, unchanging routines to keep life predictable",
        ),
        (
            "food",
            "Has eaten the same porridge breakfast every morning for years",
            "Prefers a stable routine repeated the same way every day over variety",
        ),
    ],
    "steady compounding": [
        (
            "music",
            "Practises piano scales for fifteen minutes every day and trusts the progress will come",
            "Commits to small consistent daily steps and trusts gradual accumulation over quick wins",
        ),
        (
            "money",
            "Invests a small fixed amount every month and never tries to time the market",
            "Relies on steady, regular small contributions compounding over time rather than bold moves",
        ),
    ],
    "conflict avoidance": [
        (
            "relationships",
            "Stays silent when her partner makes weekend plans she dislikes",
            "Avoids confrontation by keeping disagreement to oneself",
        ),
        (
            "work",
            "Never voices disagreement with his manager in meetings",
            "Withholds objections to keep the peace rather than risk open conflict",
        ),
    ],
    "thrill of risk": [
        (
            "money",
            "Puts savings into speculative crypto coins hoping for a big win",
            "Takes bold, high-variance bets for the excitement of a possible big payoff",
        ),
        (
            "travel",
            "Books one-way trips to remote places with no plan at all",
            "Embraces uncertainty and jumps into risky ventures for the thrill",
        ),
    ],
    "self-reliance": [
        (
            "home",
            "Does every repair in the house himself rather than call a tradesperson",
            "Prefers to handle problems alone rather than depend on experts",
        ),
        (
            "health",
            "Researches symptoms online and treats himself instead of seeing a doctor",
            "Relies on own judgement and avoids asking others for help",
        ),
    ],
    "streak motivation": [
        (
            "fitness",
            "Runs mainly to keep the streak going in his running app",
            "Is motivated by unbroken streaks and visible progress markers",
        ),
        (
            "learning",
            "Studies Spanish every day mostly to keep the app's daily streak alive",
            "Keeps a habit alive chiefly to avoid breaking a visible chain of progress",
        ),
    ],
}

# (schema a, behaviour a, schema b, behaviour b): the same regularity in other words.
REDUNDANT: list[tuple[str, str, str, str]] = [
    (
        "Runs every morning before work",
        "Keeps a fixed daily exercise routine",
        "Goes for a run each morning before starting work",
        "Maintains a consistent daily exercise routine",
    ),
    (
        "Works late into the night before deadlines",
        "Delays effort until pressure forces action",
        "Works until late at night when a deadline is close",
        "Postpones effort until pressure compels action",
    ),
    (
        "Drinks several cups of coffee every morning",
        "Relies on a stimulant habit to start the day",
        "Has three or four coffees each morning",
        "Depends on a stimulant routine to get going in the morning",
    ),
    (
        "Visits her parents every other Sunday",
        "Keeps regular contact with family out of duty and affection",
        "Goes to see her parents every second Sunday",
        "Maintains regular family contact out of affection and duty",
    ),
    (
        "Cooks vegetarian meals at home most evenings",
        "Follows consistent values-driven choices in daily life",
        "Prepares meat-free dinners at home on most nights",
        "Makes consistent value-based choices in daily life",
    ),
    (
        "Reads dozens of reviews before buying anything",
        "Researches exhaustively before committing to a decision",
        "Checks many reviews before every purchase",
        "Gathers extensive information before deciding",
    ),
    (
        "Takes a short nap after lunch most days",
        "Manages energy with regular short rests",
        "Naps briefly after lunch on most days",
        "Restores energy through short regular breaks",
    ),
    (
        "Saves ten percent of every paycheck",
        "Plans ahead with disciplined regular saving",
        "Puts a tenth of each salary into savings",
        "Sets resources aside regularly with discipline",
    ),
    (
        "Avoids arguing with his manager in meetings",
        "Avoids confrontation to keep the peace",
        "Does not contradict his boss in meetings",
        "Keeps the peace by avoiding open conflict",
    ),
    (
        "Practises yoga every morning at home",
        "Keeps a steady daily self-care routine",
        "Does yoga at home each morning",
        "Maintains a consistent daily self-care practice",
    ),
]
