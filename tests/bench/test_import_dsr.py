"""import-dsr on a small checkout written for this project in DSR-Bench's file formats (no DSR-Bench data)."""
import json

import duckdb
import pytest

from runners.cli import main
from schemas import INSTANCES, REFERENCE_CHECKS, SCORES

FILES = {
    "generation/priority_queue/compound/compound_easy.txt":
        "PriorityQueue 0\ninsert (5, 40)\ninsert (7, 40)\nraise_key (5, 40)\ndelete\ninsert (9, 10)\n"
        "[[5, 40], [9, 10]]\n"
        "PriorityQueue 1\ninsert (1, 2)\nfrobnicate (1, 3)\n[[1, 2]]\n"
        "PriorityQueue 2\ninsert (3, 8)\ndecrease_key (3, 1)\n[[3, 1]]\n",
    "generation/bloom_filter/compound/compound_easy.txt":
        "CountingBloomFilter 0 (m: 4, k: 2)\ninsert 1\ndelete 2\n[0, 1, 0, 0]\n",
    "generation/kd_heap/compound_2d/compound_medium.txt":
        "Heap 0, Dimension: 2\ninsert (0, [3, 4])\ninsert (1, [1, 1])\ninsert (2, [3, 4])\ninsert (3, [0, 0])\n"
        "delete\n[1, 0, 2]\n",
    "generation/ball_tree/construction/bt_construction_easy.txt":
        "Tree 0, M = 2\nPoints: [[0, 0], [10, 0], [0, 10], [10, 10], [5, 5]]\n"
        "Traversal: [[5.0, 5.0], [6.25, 6.25], [5.0, 8.333333333333334], [7.5, 7.5], [0.0, 10.0], [10.0, 0.0], [0.0, 0.0]]\n",
    "natural/bst/natural-hard.txt":
        "insert Ada Quill 10:00\ninsert Bo Reyes 09:00\ninsert Cy Stone 11:00\ninsert Di Tran 10:30\ndelete Ada Quill\n"
        "[('Di Tran', '10:30'), ('Bo Reyes', '09:00'), ('Cy Stone', '11:00')]\n\n"
        "insert Ed Umber 08:00\n[('Ed Umber', '08:00')]\n",
    "generation/array/access/access_medium.txt": "0\n[4, 8, 15]\nIndex: 2\nAnswer: 15\n",
    "generation/array/delete/delete_easy.txt": "0\n[3, 9, 3]\nElement: 3\nAnswer: [9, 3]\n1\n[1]\nElement: 2\nAnswer: [1]\n",
    "generation/array/insert/insert_easy.txt": "0\n[3, 9]\nIndex: 1\nElement: 5\nAnswer: [3, 5, 9]\n",
    "generation/array/reverse/reverse_hard.txt": "0\n[1, 2, 3]\nAnswer: [3, 2, 1]\n",
    "generation/array/search/search_easy.txt": "0\n[7, 8, 7]\nElement: 7\nAnswer: 0\n",
    "natural/queue/natural-easy.txt": "enqueue Ann Lee\nenqueue Bo Kim\ndequeue Ann Lee\nenqueue Cy Ode\n['Bo Kim', 'Cy Ode']\n",
    # input trees (keys in preorder with their children), then insert and traversal answers about them
    "generation/binary_tree/bst_generation/bst_input_easy.txt":
        "Tree 0\n50 30 70\n30 None 40\n40 None None\n70 None None\nTree 1\n5 None None\n",
    "generation/binary_tree/insert/bst_insert_easy.txt":
        "Insert: 35\nPre-order: [50,30,40,35,70] \nPost-order: [35,40,30,70,50] \n"
        "Insert: 9\nPre-order: [5,9] \nPost-order: [9,5] \n",
    "generation/binary_tree/traversal/bst_traversal_easy.txt":
        "Pre-order: [50,30,40,70] \nIn-order: [30,40,50,70] \nPost-order: [40,30,70,50] \nDepth: 3\n\n"
        "Pre-order: [5] \nIn-order: [5] \nPost-order: [5] \nDepth: 1\n",
    "generation/lru_cache/cache/lru_easy.txt":
        "LRU Cache Simulation 0, Cache Size: 2 \naccess 1\naccess 2\naccess 1\naccess 3\nFinal Cache: [1, 3]\n",
    "generation/dsu/compound/compound_easy.txt": "[10, 20, 30]\nunion(10, 20)\nunion(30, 20)\n[10, 10, 10]\n\n",
    "generation/graph/graph_input_easy.txt": "Graph 0\n7 3 5 9\n3, 7\n7, 9\n3, 5\n",
    "generation/graph/bfs/bfs_easy.txt": "Graph 0: Source = 7 \n[7, 3, 9, 5]\n",
    "generation/graph/dfs/dfs_easy.txt": "Graph 0: Source = 7 \n[7, 3, 5, 9]\n",
    "generation/heap/heapify/heapify_hard.txt": "Heap 0\n[5, 3, 8, 1]\n[1, 3, 8, 5]\n",
    "generation/binary_tree/remove/bst_remove_easy.txt": "Remove: 30\nPre-order: [50,40,70] \nPost-order: [40,70,50] \n",
    "generation/binary_tree/compound/bst_compound_medium.txt": "Insert: 8\nInsert: 3\nInsert: 9\nDelete: 8\nInsert: 4\n[9,3,4] \n",
    "natural/graph/natural-medium.txt":
        "nodes: ['Oda', 'Bex', 'Cai', 'Zed']\nedges: [('Oda', 'Zed'), ('Oda', 'Cai'), ('Cai', 'Bex')]\nsource: Oda\n"
        "traversal: ['Oda', 'Cai', 'Bex', 'Zed']\n\n",
    "generation/hashmap/compound/compound_easy.txt":
        "HashMap 0 with 3 buckets \nadd key 4 value 1 \nadd key 7 value 2 \nremove 4 \nadd key 5 value 9 \n"
        "Final HashMap: [[], [(7, 2)], [(5, 9)]] \n\n",
    "generation/kd_tree/construct_2d/construct_easy.txt":
        "Tree 0\nPoints: [[5, 1], [2, 7], [8, 4]]\nTraversal: [[5, 1], [2, 7], [8, 4]]\n",
    # a tie on x: DSR-Bench's order for equal keys put [5, 2] first; thmforge's stated rule puts [5, 1] first
    "generation/kd_tree/construct_moon/construct_hard.txt":
        "Tree 0\nPoints: [[5, 1], [5, 2], [1, 9]]\nTraversal: [[5, 2], [1, 9], [5, 1]]\n",
    "generation/skip_list/compound/compound_easy.txt":
        "SkipList 0 (Max Level: 2)\ninsert 5\nLevel generation probabilities: 0.1, 0.9\ninsert 3\n"
        "Level generation probabilities: 0.7\ninsert 5\ndelete 9\n[[5], [3, 5]]\n",
    "generation/rb_tree/construct/rbt_construct_easy.txt":
        "Tree 0\nValues: [10,20,30]\nPre-order: [[20, 'b'],[10, 'r'],[30, 'r']]\n",
    "generation/rb_tree/compound/rbt_compound_easy.txt":
        "Tree 0\nInsert: 10\nInsert: 20\nDelete: 10\nPre-order: [[20, 'b']]\nTree 1\nInsert: 4\nDelete: 4\nPre-order: []\n",
    "generation/b_plus_tree/compound/compound_easy.txt":
        "BPlusTree 0 (Order: 3)\ninsert 5\ninsert 1\ninsert 9\ndelete 1\n[[5], [], [5, 9]]\n"
        "BPlusTree 1 (Order: 3)\ninsert 2\ndelete 2\n[[]]\n",
    "generation/stack/compound/compound_easy.txt": "push 4\npush 6\npop\npush 1\n[4, 1]\n",
    "generation/heap/compound/compound_easy.txt": "Heap 0\ninsert 9\ninsert 4\ninsert 7\ninsert 1\ndelete\n[4, 9, 7]\n",
    # a wrong ground truth: imported as given, flagged as a disagreement
    "generation/queue/compound/compound_hard.txt": "enqueue 1\nenqueue 2\ndequeue\n[1]\n",
    "generation/ball_tree/generation.py": "raise SystemExit('never executed')\n",
    "generation/unknown/thing_easy.txt": "whatever\n",
}


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "DSR-Bench"
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_import_writes_a_release_with_checks_and_counts_that_add_up(checkout, tmp_path, capsys):
    out = tmp_path / "release"
    assert main(["import-dsr", str(checkout), "--output", str(out)]) == 1      # one block failed
    printed = capsys.readouterr().out
    assert "43 instances imported" in printed and "agrees on 41, differs on 2; 2 blocks failed; 1 files skipped" in printed
    summary = json.loads((out / "import_summary.json").read_text())
    assert summary["failures"] == [
        {"file": "generation/array/delete/delete_easy.txt", "line": 5,
         "reason": "line 5: the element to delete, 2, is not in the array"},
        {"file": "generation/priority_queue/compound/compound_easy.txt", "line": 8,
         "reason": "line 10: unknown priority-queue operation 'frobnicate (1, 3)'"}]
    assert summary["skipped_files"] == ["generation/unknown/thing_easy.txt"]
    assert summary["by_task"]["priority_queue/compound"] == {"imported": 2, "agree": 2, "differ": 0}
    assert summary["by_task"]["queue/compound"] == {"imported": 1, "agree": 0, "differ": 1}
    con = duckdb.connect()
    con.execute(INSTANCES.view_sql(str(out)))
    con.execute(REFERENCE_CHECKS.view_sql(str(out)))
    rows = dict(con.execute("SELECT instance_id, answer FROM instances").fetchall())
    assert len(rows) == 43
    assert json.loads(rows["dsr.bst.compound.medium.00000"]) == [9, [3, None, [4, None, None]], None]
    assert json.loads(rows["dsr.dsu.compound_roots.easy.00000"]) == [0, 0, 0]  # labels renumbered by position
    assert json.loads(rows["dsr.graph.dfs.easy.00000"]) == [2, 0, 1, 3]         # nodes renumbered by label order
    assert json.loads(rows["dsr.bst.insert.easy.00000"]) == [50, [30, None, [40, [35, None, None], None]], [70, None, None]]
    assert rows["dsr.bst.depth.easy.00001"] == "1"
    assert json.loads(rows["dsr.skip_list.compound.easy.00000"]) == [[3, 5], [5]]            # level 0 first
    assert json.loads(rows["dsr.red_black_tree.construct.easy.00000"]) == [[20, "B"], [[10, "R"], None, None],
                                                                             [[30, "R"], None, None]]
    assert rows["dsr.red_black_tree.compound.easy.00001"] == "null"
    assert json.loads(rows["dsr.bplus_tree.compound.easy.00000"]) == [[5], [[[], []], [[5, 9], []]]]
    assert summary["by_task"]["bst/inorder"] == {"imported": 2, "agree": 2, "differ": 0}
    assert summary["by_task"]["queue/natural_ice_cream"] == {"imported": 1, "agree": 1, "differ": 0}
    assert json.loads(con.execute("SELECT spec FROM instances WHERE task = 'delete'").fetchone()[0]) == {
        "array": [3, 9, 3], "index": 0}                              # DSR-Bench deletes by value: its first index
    assert json.loads(rows["dsr.ball_tree.construct.easy.00000"])[2] == [5.0, 8.33]
    assert json.loads(rows["dsr.kd_heap.labelled_compound.medium.2d.00000"]) == [1, 0, 2]
    assert json.loads(rows["dsr.bst.natural_clinic.hard.00000"]) == ["Di Tran", "Bo Reyes", "Cy Stone"]
    assert json.loads(rows["dsr.queue.compound.hard.00000"]) == [1]          # DSR-Bench's answer is the truth
    differing = con.execute("SELECT c.instance_id, c.thmforge_answer, c.reason, i.suite, i.variant FROM reference_checks c "
                            "JOIN instances i USING (instance_id) WHERE NOT c.agrees ORDER BY 1").fetchall()
    assert differing[1] == ("dsr.queue.compound.hard.00000", "[2]",
                            "answers differ (no known rule difference explains it)", "dsr-main", None)
    assert differing[0][0] == "dsr.kd_tree.construct.hard.moons.00000" and differing[0][4] == "moons"
    assert differing[0][2].startswith("points tie on a splitting coordinate")
    assert json.loads(rows["dsr.kd_tree.construct.hard.moons.00000"]) == [[5, 2], [[1, 9], None, None], [[5, 1], None, None]]
    prompt = con.execute("SELECT prompt FROM instances WHERE instance_id = 'dsr.priority_queue.compound.easy.00000'").fetchone()[0]
    assert "increase_key of value 5 to priority 40" in prompt and "changes nothing" in prompt
    bloom = con.execute("SELECT prompt FROM instances WHERE task = 'compound_clamped'").fetchone()[0]
    assert "stays 0" in bloom


def test_eval_bench_scores_the_imported_release_unchanged(checkout, tmp_path):
    out = tmp_path / "release"
    main(["import-dsr", str(checkout), "--output", str(out)])
    con = duckdb.connect()
    con.execute(INSTANCES.view_sql(str(out)))
    with open(tmp_path / "oracle.jsonl", "w") as handle:
        for instance_id, answer in con.execute("SELECT instance_id, answer FROM instances").fetchall():
            handle.write(json.dumps({"instance_id": instance_id, "model": "oracle", "trial": 0,
                                     "response": json.dumps({"final_answer": json.loads(answer)})}) + "\n")
    assert main(["eval-bench", "--instances", str(out), "--predictions", str(tmp_path / "oracle.jsonl"),
                 "--output", str(tmp_path / "eval")]) == 0
    con.execute(SCORES.view_sql(str(tmp_path / "eval")))
    assert con.execute("SELECT count(*), min(exact) FROM scores").fetchone() == (43, 1.0)


def test_not_a_checkout_is_a_usage_error(tmp_path, capsys):
    assert main(["import-dsr", str(tmp_path), "--output", str(tmp_path / "out")]) == 2
    assert "not a DSR-Bench checkout" in capsys.readouterr().err


def test_a_missing_input_file_fails_its_blocks_with_the_reason(checkout, tmp_path):
    (checkout / "generation/binary_tree/bst_generation/bst_input_easy.txt").unlink()
    main(["import-dsr", str(checkout), "--output", str(tmp_path / "release")])
    summary = json.loads((tmp_path / "release" / "import_summary.json").read_text())
    missing = [f for f in summary["failures"] if "bst_input_easy.txt is missing" in f["reason"]]
    assert len(missing) == 5 and "bst/insert" not in summary["by_task"]
