"""import-dsr on the formats added second (coloured red-black input trees, trie, DAWG, suffix tree,
geometric-graph BFS, DSU roots): small files written for this project in DSR-Bench's formats (no DSR-Bench data)."""
import json

import duckdb

from runners.cli import main
from schemas import INSTANCES, REFERENCE_CHECKS

FILES = {
    # input trees in preorder, 'key colour' per node and '#' per empty subtree
    "generation/rb_tree/rbt_input_easy.txt": "Tree 0\n20 b\n10 r\n#\n#\n30 r\n#\n#\nTree 1\n5 b\n#\n#\n",
    "generation/rb_tree/insert/rbt_insert_easy.txt":
        "Insert: 25\nPre-order: [20,10,30,25] \nPre-color: [b,b,b,r] \nPost-order: [10,25,30,20] \nPost-color: [b,r,b,b] \n"
        "Insert: 7\nPre-order: [5,7] \nPre-color: [b,r] \nPost-order: [7,5] \nPost-color: [r,b] \n",
    # block 1's answer does not come from input tree 1: a failure naming the mismatch
    "generation/rb_tree/delete/rbt_delete_easy.txt":
        "Delete: 10\nPre-order: [20,30] \nPre-color: [b,r] \nPost-order: [30,20] \nPost-color: [r,b] \n"
        "Delete: 5\nPre-order: [9] \nPre-color: [b] \nPost-order: [9] \nPost-color: [b] \n",
    "generation/rb_tree/construct_compound/rbt_construct_compound_easy.txt":
        "Tree 0\nInsert: 40\nDelete: 10\nPre-order: [[30, 'b'],[20, 'b'],[40, 'b']]\nTree 1\nDelete: 5\nPre-order: []\n",
    # a repeated key rotated into the left subtree of an equal one: read as the red-black tree it is
    "generation/rb_tree/compound/rbt_compound_medium.txt":
        "Tree 0\nInsert: 5\nInsert: 5\nInsert: 5\nPre-order: [[5, 'b'],[5, 'r'],[5, 'r']]\n",
    "generation/trie/compound/compound_easy.txt": "TrieTree 0\ninsert ab\ninsert ac\ninsert b\ndelete ac\n['', 'a', 'b', 'b']\n",
    "generation/dawg/compound/compound_medium.txt":
        "DAWG 0\ninsert ab\ninsert cb\ninsert a\n[['', 'F'], ['a', 'T'], ['c', 'F'], ['ab', 'T']]\n",
    "generation/suffix_tree/construct/construct_hard.txt": "SuffixTree 0\naba$\n['$', 'a', '$', 'ba$', 'ba$']\n",
    # 0.4 - 0.1 is exactly the threshold 0.3 (in floats it is a little more): an edge
    "generation/geom_graph/construct_2d/construct_easy.txt":
        "Graph 0\nNodes: [[0.1, 0.0], [0.4, 0.0], [5.0, 5.0], [0.0, 0.2]]\nThreshold: 0.3\nFrom: [0.1, 0.0]\n"
        "BFS: [[0.1, 0.0], [0.0, 0.2], [0.4, 0.0]]\n",
    # DSR-Bench asks for find(x) of every element: 4's parent is 3, its root 1
    "generation/dsu/compound/compound_hard.txt": "[1, 2, 3, 4]\nunion(1, 2)\nunion(3, 4)\nunion(1, 3)\n[1, 1, 1, 1]\n\n",
    # the arrays every array task file repeats: not an instance file, not skipped
    "generation/array/array_input_easy.txt": "[2, 1, 2]\n",
    # only the sorted arrays are released, not the arrays to sort: skipped
    "generation/array/sorting/sorted_easy.txt": "[1,2,2]\n",
}


def test_the_added_formats_import_and_agree_with_thmforge(tmp_path, capsys):
    root = tmp_path / "DSR-Bench"
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    out = tmp_path / "release"
    assert main(["import-dsr", str(root), "--output", str(out)]) == 1
    assert "11 instances imported" in capsys.readouterr().out
    summary = json.loads((out / "import_summary.json").read_text())
    assert summary["skipped_files"] == ["generation/array/sorting/sorted_easy.txt"]
    assert [(f["file"], f["line"]) for f in summary["failures"]] == [("generation/rb_tree/delete/rbt_delete_easy.txt", 6)]
    assert "input 'Tree 1' does not belong to this answer" in summary["failures"][0]["reason"]
    assert {task: counts["agree"] for task, counts in summary["by_task"].items()} == {
        "red_black_tree/insert": 2, "red_black_tree/delete": 1, "trie/compound_preorder": 1,
        "dawg/compound_states": 1, "suffix_tree/construct_preorder": 1, "geometric_graph/bfs": 1,
        "dsu/compound_roots": 1, "red_black_tree/tree_compound": 2, "red_black_tree/compound": 1}
    con = duckdb.connect()
    con.execute(INSTANCES.view_sql(str(out)))
    con.execute(REFERENCE_CHECKS.view_sql(str(out)))
    assert con.execute("SELECT count(*) FROM reference_checks WHERE NOT agrees").fetchone() == (0,)
    spec, answer, variant, suite = con.execute(
        "SELECT spec, answer, variant, suite FROM instances WHERE task = 'insert' ORDER BY instance_id").fetchone()
    assert json.loads(spec) == {"tree": [[20, "B"], [[10, "R"], None, None], [[30, "R"], None, None]], "insert": 25}
    assert json.loads(answer) == [[20, "B"], [[10, "B"], None, None], [[30, "B"], [[25, "R"], None, None], None]]
    assert suite == "dsr-extended"
    spec, answer, variant = con.execute(
        "SELECT spec, answer, variant FROM instances WHERE structure = 'geometric_graph'").fetchone()
    assert (json.loads(spec)["start"], json.loads(answer), variant) == (0, [0, 3, 1], "2d")   # points as node numbers
    assert json.loads(con.execute("SELECT spec FROM instances WHERE structure = 'suffix_tree'").fetchone()[0]) == {
        "string": "aba"}
    assert json.loads(con.execute("SELECT answer FROM instances WHERE task = 'compound' AND structure = 'red_black_tree'")
                      .fetchone()[0]) == [[5, "B"], [[5, "R"], None, None], [[5, "R"], None, None]]
