import json
import pathlib

import pytest

from runners.cli import main as cli
from transforms.bench import prompts
from transforms.bench.instances import build_instance, canonical_json, draw_spec
from transforms.bench.registry import ANSWER_TYPES, CATEGORIES, DIFFICULTY_LENGTHS, all_tasks, get_task
from transforms.bench.release import (DEFAULT_COUNTS, DEFAULT_TOTAL, MAIN_TASKS, parse_suites, release_cells)

STRUCTURES = {
    "Linear": {"array"}, "Temporal": {"stack", "queue", "priority_queue", "skip_list"},
    "Associative": {"hash_map", "trie", "suffix_tree"}, "Hierarchical": {"bst", "heap", "red_black_tree", "bplus_tree"},
    "Network": {"graph", "dsu"}, "Hybrid": {"lru_cache", "bloom_filter", "dawg"},
    "Spatial": {"kd_tree", "kd_heap", "geometric_graph", "ball_tree"},
}
EXTENDED = {"priority_queue/compound_no_op", "bst/natural_clinic_cancel", "kd_heap/labelled_compound",
            "ball_tree/construct", "bloom_filter/compound_clamped", "red_black_tree/insert", "red_black_tree/delete",
            "trie/compound_preorder", "dawg/compound_states", "suffix_tree/construct_preorder", "geometric_graph/bfs",
            "dsu/compound_roots", "red_black_tree/tree_compound"}
MINE = {"array/access", "array/delete", "array/insert", "array/reverse", "array/search", "stack/compound",
        "queue/compound", "priority_queue/compound", "skip_list/compound", "hash_map/compound", "trie/compound",
        "trie/prefix_count", "dawg/compound", "bloom_filter/compound", "suffix_tree/construct", "lru_cache/access",
        "lru_cache/compound"}


def test_registry_has_the_structures_tasks_and_categories():
    main = all_tasks("main")
    assert MINE <= {t.id for t in main}
    assert len(main) == MAIN_TASKS
    by_category = {}
    for task in all_tasks():
        by_category.setdefault(task.category, set()).add(task.structure)
        assert task.answer_type in ANSWER_TYPES and task.category in CATEGORIES
    assert by_category == STRUCTURES
    assert {t.suite for t in all_tasks()} == {"main", "spatial", "natural", "code", "extended"}
    assert {t.id for t in all_tasks("extended")} == EXTENDED
    assert "ball_tree" not in {t.structure for t in all_tasks() if t.suite != "extended"}
    with pytest.raises(KeyError, match="unknown task 'nope/x'"):
        get_task("nope/x")


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_every_task_generates_solves_and_rejects_a_bad_spec(task):
    for difficulty, variant in task.cells:
        for index in range(3):
            length, spec = draw_spec(task, difficulty, variant, 0, index)
            lo, hi = DIFFICULTY_LENGTHS[difficulty]
            assert lo <= length <= hi
            answer = task.solve(spec)
            assert json.loads(canonical_json(answer)) == answer
            parts = task.prompt(spec)
            assert parts.setup and parts.question and parts.answer_format
    with pytest.raises(ValueError):
        task.solve({})


def test_instance_is_a_pure_function_of_its_keys():
    task = get_task("priority_queue/compound")
    first = build_instance(task, "medium", 4, 11)
    assert build_instance(task, "medium", 4, 11) == first
    assert build_instance(task, "medium", 5, 11)["spec"] != first["spec"]
    assert build_instance(task, "medium", 4, 12)["spec"] != first["spec"]
    assert first["instance_id"] == "priority_queue.compound.medium.00004.s11"
    assert json.loads(first["answer"]) == task.solve(json.loads(first["spec"]))
    assert first["answer"] == canonical_json(json.loads(first["answer"]))


def test_exemplars_are_three_solved_instances_never_the_instance_itself():
    task = get_task("array/reverse")
    row = build_instance(task, "easy", 0, 0)
    parts = json.loads(row["prompt_parts"])
    assert len(parts["exemplars"]) == 3
    setups = [e["setup"] for e in parts["exemplars"]]
    assert parts["setup"] not in setups and len(set(setups)) == 3
    for example in parts["exemplars"]:
        array = json.loads(example["setup"][len("The array is "):-1])
        assert example["answer"] == array[::-1]


def test_every_mode_renders_and_states_the_rule():
    row = build_instance(get_task("priority_queue/compound"), "easy", 1, 0)
    parts = json.loads(row["prompt_parts"])
    assert row["prompt"] == prompts.render(parts, prompts.DEFAULT_MODE, prompts.DEFAULT_DESCRIPTION)
    for mode in prompts.MODES:
        for description in prompts.DESCRIPTIONS:
            text = prompts.render(parts, mode, description)
            assert parts["setup"] in text and "largest value" in text and "final_answer" in text
            assert (parts["definition"] in text) == (description == "full")
    assert prompts.render(parts, "k-shot").count("Example ") == 3
    assert '"steps"' in prompts.render(parts, "stepwise") and '"code"' in prompts.render(parts, "code-required")
    with pytest.raises(ValueError, match="unknown prompt mode"):
        prompts.render(parts, "telepathy")


def test_default_release_counts_exactly():
    cells = release_cells()
    by_suite = {}
    for cell in cells:
        by_suite[cell.suite] = by_suite.get(cell.suite, 0) + cell.count
        if cell.suite in ("main", "natural", "code"):
            assert cell.count == 30
    assert by_suite == DEFAULT_COUNTS and sum(by_suite.values()) == DEFAULT_TOTAL == 4140
    scaled = release_cells(("main",), per_cell=7)
    assert len(scaled) == 105 and {c.count for c in scaled} == {7}
    assert parse_suites("code,main") == ("main", "code")
    with pytest.raises(ValueError, match="unknown suites"):
        parse_suites("main,nope")


def test_another_seed_shares_no_prompt_with_the_default_seed():
    def prompts_of(seed):
        return {build_instance(get_task(c.task_id), c.difficulty, i, seed, c.variant)["prompt"]
                for c in release_cells() for i in range(c.count)}
    default = prompts_of(0)
    assert len(default) == DEFAULT_TOTAL
    assert not default & prompts_of(1)


def test_bench_answer_command(capsys, tmp_path):
    assert cli(["bench-answer", "--task", "stack/compound",
                "--spec", '{"initial": [1], "operations": [["push", 2], ["pop"], ["push", 3]]}']) == 0
    assert capsys.readouterr().out.strip() == "[1,3]"
    spec_file = tmp_path / "spec.json"
    spec_file.write_text('{"array": [3, 1, 2]}')
    assert cli(["bench-answer", "--task", "array/reverse", "--spec", str(spec_file)]) == 0
    assert capsys.readouterr().out.strip() == "[2,1,3]"
    assert cli(["bench-answer", "--task", "lru_cache/access", "--spec", '{"capacity": 0, "accesses": []}']) == 2
    assert "capacity must be in 1..inf" in capsys.readouterr().err
    assert cli(["bench-answer", "--task", "queue/compound", "--spec", "{not json"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert cli(["bench-answer", "--task", "queue/nope", "--spec", "{}"]) == 2
    assert "unknown task" in capsys.readouterr().err


def test_task_docs_are_generated_from_the_registry():
    import subprocess
    import sys
    script = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_docs.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
