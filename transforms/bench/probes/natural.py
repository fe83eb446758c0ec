"""Natural-language probe: the main suite's operations told as stories, with distractor names.

Three stories, each answered by a main-suite reference implementation through the registry (the
story's spec is translated to that task's spec, solved there, and the answer translated back):

- queue/natural_ice_cream: children line up at an ice-cream truck; "serve" hands the child at the
  front an ice cream and they leave. Spec {"initial": [name], "events": [["join", name, w] |
  ["serve", w] | ["aside", name, w]]} -> list[str], the line from front to back (via
  queue/compound). length = number of events.
- bst/natural_clinic: a clinic files appointments in a binary search tree keyed by (time, name),
  compared as strings: first the "HH:MM" time, then the name (as in DSR-Bench's released answers);
  equal keys go right. Spec {"events": [["book", "HH:MM", name, w] | ["cancel", name, w] |
  ["aside", name, w]]} -> list[str], the patients' names in preorder. A cancellation removes the
  patient's appointment from the tree (bst/compound's remove: two children, in-order successor),
  after which the patient may book again; a prompt with cancellations states that rule. The
  default release's stories only book; bst/natural_clinic_cancel (suite "extended") tells
  DSR-Bench's stories with cancellations. length = number of bookings.
- graph/natural_tunnels: planets joined by two-way tunnels; an explorer visits planets depth-first
  from a start planet, always taking the alphabetically first unvisited neighbour (DSR-Bench's
  rule). Spec {"planets": [name], "start": name, "events": [["tunnel", a, b, w] |
  ["aside", name, w]]} -> list[str], the visiting order (via graph/dfs). length = number of planets.

`w` picks one of several wordings of the sentence; "aside" sentences mention distractor names that
are not part of the structure and never change the answer. Names in a story are distinct.
"""
from __future__ import annotations

import random

from transforms.bench.registry import PromptParts, SpecError, Task, check_int, check_str, field, get_task, register

CHILDREN = ("Ava", "Ben", "Cleo", "Dev", "Ella", "Finn", "Gia", "Hugo", "Isla", "Jack", "Kai", "Lena", "Milo",
            "Nora", "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Vik", "Wren", "Xavi", "Yara", "Zane",
            "Alba", "Bodhi", "Cyrus", "Dalia", "Ezra", "Faye", "Gus", "Hana", "Ivo", "Juno", "Kira", "Leo", "Maya",
            "Nico")
PATIENTS = ("Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen", "Khan",
            "Lopez", "Moreau", "Novak", "Okafor", "Patel", "Quist", "Rossi", "Singh", "Tanaka", "Ueda", "Vargas",
            "Weber", "Xu", "Yilmaz", "Zhou", "Abbott", "Brandt", "Costa", "Dubois", "Eriksen", "Ferreira",
            "Gupta", "Haddad", "Ivanova", "Jovanovic", "Kowalski", "Larsen", "Meyer", "Nakamura")
PLANETS = ("Aldra", "Brevon", "Cyrra", "Dunmar", "Elyth", "Fennix", "Gorath", "Helion", "Ixis", "Jaltor",
           "Kepra", "Lumen", "Myrrh", "Nexis", "Orrin", "Pellar", "Quorra", "Rhovan", "Sorin", "Talos", "Umbra",
           "Vexa", "Wystan", "Xylo", "Yrrel", "Zephon", "Arcis", "Belkar", "Corvus", "Drex", "Evora", "Fyr",
           "Galen", "Hoth", "Iridan", "Jorvik", "Kestra", "Lyra", "Moros", "Nadir")
SLOTS = tuple(f"{h:02d}:{m:02d}" for h in range(8, 18) for m in (0, 30))

QUEUE_WORDINGS = {
    "join": ("{0} joins the back of the line.", "{0} runs over and gets in line at the end.",
             "Then {0} lines up behind everyone else."),
    "serve": ("The child at the front gets an ice cream and leaves.", "The driver serves whoever is first in line, who walks away happily.",
              "The first child in line is handed a cone and leaves the line."),
    "aside": ("{0} waves at the line from across the street but does not join.", "{0}'s dog barks at the truck.",
              "{0} rides past on a bike without stopping."),
}
CLINIC_WORDINGS = {
    "book": ("{1} books an appointment at {0}.", "The receptionist schedules {1} for {0}.",
             "An appointment at {0} is made for {1}."),
    "cancel": ("{0} cancels their appointment.", "{0} calls to cancel the appointment.",
               "The receptionist removes {0}'s appointment."),
    "aside": ("{0} calls to ask about parking but books nothing.", "Dr. {0} is on duty today.",
              "{0} drops off a form and leaves without an appointment."),
}
TUNNEL_WORDINGS = {
    "tunnel": ("A tunnel joins {0} and {1}.", "Travellers can pass between {0} and {1} through a tunnel.",
               "{0} and {1} are connected by a tunnel."),
    "aside": ("Captain {0} once mapped these tunnels.", "The freighter {0} is docked nearby.",
              "Rumours speak of a planet called {0}, but no tunnel leads there."),
}


def _wording(event: list, wordings: dict, i: int) -> int:
    count = len(wordings[event[0]])
    return check_int(event[-1], f"events[{i}] wording", 0, count - 1)


def _events(spec: dict, arities: dict[str, int], wordings: dict) -> list[list]:
    events = field(spec, "events")
    if not isinstance(events, list):
        raise SpecError("events must be a list")
    for i, event in enumerate(events):
        if not isinstance(event, list) or not event or event[0] not in arities or len(event) != arities[event[0]] + 2:
            shapes = ", ".join(f"[{k!r}, {'str, ' * n}wording]" for k, n in arities.items())
            raise SpecError(f"events[{i}] must be one of {shapes}, got {event!r}")
        for arg in event[1:-1]:
            check_str(arg, f"events[{i}] argument")
        _wording(event, wordings, i)
    return events


def _sentence(event: list, wordings: dict) -> str:
    return wordings[event[0]][event[-1]].format(*event[1:-1])


# --- ice-cream queue ---------------------------------------------------------------------------

def solve_ice_cream(spec: dict) -> list[str]:
    initial = field(spec, "initial")
    if not isinstance(initial, list):
        raise SpecError("initial must be a list of names")
    events = _events(spec, {"join": 1, "serve": 0, "aside": 1}, QUEUE_WORDINGS)
    names = sorted({check_str(n, "initial name") for n in initial} | {e[1] for e in events if e[0] == "join"})
    number = {n: i for i, n in enumerate(names)}
    operations = [["enqueue", number[e[1]]] if e[0] == "join" else ["dequeue"] for e in events if e[0] != "aside"]
    line = get_task("queue/compound").solve({"initial": [number[n] for n in initial], "operations": operations})
    return [names[i] for i in line]


def generate_ice_cream(rng: random.Random, length: int) -> dict:
    pool = rng.sample(CHILDREN, len(CHILDREN))
    initial = [pool.pop() for _ in range(rng.randint(1, 3))]
    size, events = len(initial), []
    for _ in range(length):
        roll = rng.random()
        if roll < 0.15:
            events.append(["aside", pool.pop(), rng.randrange(3)])
        elif size and roll < 0.5:
            events.append(["serve", rng.randrange(3)])
            size -= 1
        else:
            events.append(["join", pool.pop(), rng.randrange(3)])
            size += 1
    return {"initial": initial, "events": events}


def prompt_ice_cream(spec: dict) -> PromptParts:
    story = " ".join(_sentence(e, QUEUE_WORDINGS) for e in spec["events"])
    return PromptParts(
        definition=("An ice-cream truck serves children in the order they lined up: a child who arrives joins the back "
                    "of the line, and the child at the front is served and leaves (a queue, first in, first out)."),
        name="queue", setup=(f"At first the line is, from front to back: {', '.join(spec['initial'])}. " if spec["initial"]
               else "At first nobody is in line. ") + story,
        question="Who is in the line at the end, from front to back?",
        answer_format="a list of names (front first; [] if the line is empty)",
        rules="Only children who join the line are in it; anyone else mentioned is not. Report names front to back.")


# --- clinic BST --------------------------------------------------------------------------------

def solve_clinic(spec: dict) -> list[str]:
    events = _events(spec, {"book": 2, "cancel": 1, "aside": 1}, CLINIC_WORDINGS)
    booked: dict[str, tuple[str, str]] = {}     # patient -> the key of their current appointment
    operations = []
    for i, event in enumerate(events):
        if event[0] == "book":
            if event[2] in booked:
                raise SpecError(f"events[{i}]: {event[2]} already has an appointment (cancel it first)")
            booked[event[2]] = (event[1], event[2])
            operations.append(["insert", booked[event[2]]])
        elif event[0] == "cancel":
            if event[1] not in booked:
                raise SpecError(f"events[{i}]: {event[1]} cancels but has no appointment")
            operations.append(["remove", booked.pop(event[1])])
    ranks = {key: i for i, key in enumerate(sorted({op[1] for op in operations}))}
    tree = get_task("bst/compound").solve({"keys": [], "operations": [[op[0], ranks[op[1]]] for op in operations]})
    by_rank = sorted(ranks, key=ranks.get)
    return [by_rank[key][1] for key in _preorder(tree)]


def _preorder(tree: list | None) -> list[int]:
    """Keys of a serialized binary tree ([key, left, right] or null) in preorder, without recursion."""
    keys, stack = [], [tree]
    while stack:
        node = stack.pop()
        if node is not None:
            keys.append(node[0])
            stack += [node[2], node[1]]
    return keys


def generate_clinic(rng: random.Random, length: int, cancel_share: float = 0.0) -> dict:
    """`length` bookings with asides; with `cancel_share` > 0, about that share of the bookings is
    later cancelled (the story then ends with the remaining appointments in the tree)."""
    pool = rng.sample(PATIENTS, len(PATIENTS))
    events: list[list] = []
    booked, holding = 0, []
    while booked < length:
        if cancel_share and holding and rng.random() < cancel_share:
            events.append(["cancel", holding.pop(rng.randrange(len(holding))), rng.randrange(3)])
        elif rng.random() < 0.15 and len(pool) > length - booked:  # asides never use up the bookers' names
            events.append(["aside", pool.pop(), rng.randrange(3)])
        else:
            events.append(["book", rng.choice(SLOTS), pool.pop(), rng.randrange(3)])
            holding.append(events[-1][2])
            booked += 1
    return {"events": events}


def prompt_clinic(spec: dict) -> PromptParts:
    story = " ".join(_sentence(e, CLINIC_WORDINGS) for e in spec["events"])
    return PromptParts(
        definition=("A clinic's scheduler files each appointment in a binary search tree as it is booked: starting at the "
                    "root, an appointment with a smaller key goes to the left subtree, otherwise to the right, until it "
                    "reaches an empty place."),
        name="binary search tree", setup=f"The tree starts empty. {story}",
        question="List the patients in preorder (an appointment, then its left subtree, then its right subtree).",
        answer_format="a list of patient names in preorder",
        rules=("An appointment's key is (time, name), compared as strings: first the HH:MM time, and for the same time "
               "the name in alphabetical order; a key not smaller than a node's key goes right. Only people who book "
               "an appointment are in the tree." + (CANCEL_RULE if any(e[0] == "cancel" for e in spec["events"]) else "")))


CANCEL_RULE = (" A cancellation removes that patient's appointment from the tree: a node with no child is removed, a "
               "node with one child is replaced by that child, and a node with two children takes the key of its "
               "in-order successor (the smallest key in its right subtree), which is then removed from there.")


# --- planet tunnels ----------------------------------------------------------------------------

def solve_tunnels(spec: dict) -> list[str]:
    planets = field(spec, "planets")
    if not isinstance(planets, list) or not planets:
        raise SpecError("planets must be a non-empty list of names")
    names = sorted({check_str(p, "planet") for p in planets})
    if len(names) != len(planets):
        raise SpecError("planet names must be distinct")
    number = {n: i for i, n in enumerate(names)}
    start = check_str(field(spec, "start"), "start")
    events = _events(spec, {"tunnel": 2, "aside": 1}, TUNNEL_WORDINGS)
    unknown = sorted({p for e in events if e[0] == "tunnel" for p in e[1:3]} - set(names) | ({start} - set(names)))
    if unknown:
        raise SpecError(f"tunnels and start must name listed planets; unknown: {', '.join(unknown)}")
    edges = [[number[e[1]], number[e[2]]] for e in events if e[0] == "tunnel"]
    order = get_task("graph/dfs").solve({"num_nodes": len(names), "edges": edges, "start": number[start]})
    return [names[i] for i in order]


def generate_tunnels(rng: random.Random, length: int) -> dict:
    names = rng.sample(PLANETS, length)
    pool = [p for p in PLANETS if p not in names]
    joined, tunnels = [names[0]], []
    for name in names[1:]:
        tunnels.append([rng.choice(joined), name])
        joined.append(name)
    pairs = {tuple(sorted(t)) for t in tunnels}
    for _ in range(length // 2):
        a, b = rng.sample(names, 2)
        if tuple(sorted((a, b))) not in pairs:
            pairs.add(tuple(sorted((a, b))))
            tunnels.append([a, b])
    rng.shuffle(tunnels)
    events = [["tunnel", a, b, rng.randrange(3)] for a, b in tunnels]
    for _ in range(rng.randint(1, 3)):
        events.insert(rng.randint(0, len(events)), ["aside", pool.pop(rng.randrange(len(pool))), rng.randrange(3)])
    return {"planets": names, "start": rng.choice(names), "events": events}


def prompt_tunnels(spec: dict) -> PromptParts:
    story = " ".join(_sentence(e, TUNNEL_WORDINGS) for e in spec["events"])
    return PromptParts(
        definition=("Planets joined by two-way tunnels form a graph. An explorer does a depth-first search: from the "
                    "current planet she goes through a tunnel to an unvisited planet, explores everything reachable from "
                    "there, and only then returns to try the next tunnel."),
        name="graph", setup=f"The planets are {', '.join(spec['planets'])}. {story} The explorer starts on {spec['start']}.",
        question="In which order does the explorer first visit the planets?",
        answer_format="a list of planet names in visiting order, the start first",
        rules=("From each planet the explorer takes the tunnels in alphabetical order of the planet they lead to. Only "
               "the listed planets exist; other names mentioned are not planets."))


for _structure, _name, _category, _gen, _solve, _prompt in (
    ("queue", "natural_ice_cream", "Temporal", generate_ice_cream, solve_ice_cream, prompt_ice_cream),
    ("bst", "natural_clinic", "Hierarchical", generate_clinic, solve_clinic, prompt_clinic),
    ("graph", "natural_tunnels", "Network", generate_tunnels, solve_tunnels, prompt_tunnels),
):
    register(Task(category=_category, structure=_structure, name=_name, answer_type="list[str]", generate=_gen,
                  solve=_solve, prompt=_prompt, doc=__doc__, suite="natural"))
register(Task(category="Hierarchical", structure="bst", name="natural_clinic_cancel", answer_type="list[str]",
              generate=lambda rng, length: generate_clinic(rng, length, cancel_share=0.2), solve=solve_clinic,
              prompt=prompt_clinic, doc=__doc__, suite="extended"))
