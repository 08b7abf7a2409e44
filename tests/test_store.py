"""grader.sweep.store: durable appends, torn lines, and what a resumed sweep skips; config and cells."""
from __future__ import annotations

import io
import json

import pytest

from grader.sweep.cells import expand, render_command, run_id
from grader.sweep.config import ConfigError, load_config
from grader.sweep.store import done_ids
from sssp_common.record import ResultsFile, latest_by_run_id, project_commit, read_rows, utc_now


def row(run_id, status="ok", **more):
    return {"run_id": run_id, "status": status, **more}


def test_append_and_reload(tmp_path):
    path = tmp_path / "sub" / "r.jsonl"
    with ResultsFile(path) as store:
        store.append(row("a"))
        store.append(row("b", "wrong", detail="ü"))
    assert [r["run_id"] for r in read_rows(path)] == ["a", "b"]
    assert read_rows(tmp_path / "absent.jsonl") == []


def test_torn_last_line_is_ignored_with_a_warning_and_appends_go_on(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(row("a")) + "\n" + '{"run_id": "b", "sta')
    warn = io.StringIO()
    assert [r["run_id"] for r in read_rows(path, warn=warn)] == ["a"]
    assert "torn" in warn.getvalue()
    with ResultsFile(path) as store:
        store.append(row("c"))
    assert [r["run_id"] for r in read_rows(path, warn=None)] == ["a", "c"]


def test_resume_semantics(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultsFile(path) as store:
        for r in (row("a"), row("b", "crash"), row("c", "ok"), row("c", "timeout"), row("b", "ok")):
            store.append(r)
    assert done_ids(path) == {"a", "b", "c"}
    # --rerun-failed: the latest row decides
    assert done_ids(path, rerun_failed=True) == {"a", "b"}
    latest = latest_by_run_id(read_rows(path))
    assert latest["c"]["status"] == "timeout" and latest["b"]["status"] == "ok"


def test_provenance():
    assert project_commit() == "unknown" or len(project_commit().split("+")[0]) == 40
    assert utc_now().endswith("Z") and "T" in utc_now()


def test_run_id_is_stable_and_distinct():
    a = run_id("project", "g", "given", "bmf", "outcore", 256, 8, 0)
    assert a == run_id("project", "g", "given", "bmf", "outcore", 256, 8, 0)
    assert a != run_id("project", "g", "given", "bmf", "outcore", 256, 8, 1)
    assert len(a) == 16


def write_config(tmp_path, text):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_default_config_pairings(tmp_path):
    config = load_config(write_config(tmp_path, 'graphs = ["g.txt"]\n'))
    assert config.name == "s" and config.scale == "ci" and len(config.configs) == 5
    cells = expand(config)
    combos = {(c.method, c.ordering, c.sync) for c in cells}
    assert {(o, s) for m, o, s in combos if m == "segscan"} == {("destination", "outcore")}
    assert {(o, s) for m, o, s in combos if m == "tpe"} == {("source", "outcore"), ("source", "incore")}
    assert len({(o, s) for m, o, s in combos if m == "bmf"}) == 6
    assert len(cells) == 5 * (6 + 1 + 2 + 4)
    assert len({c.run_id for c in cells}) == len(cells)


def test_shipped_configs_load():
    from grader.sweep.cells import REPO_ROOT
    for name in ("sweep", "full", "sample-package"):
        config = load_config(REPO_ROOT / "configs" / f"{name}.toml")
        assert expand(config)


@pytest.mark.parametrize("text, key", [
    ('graphs = ["g"]\norderigs = ["given"]\n', "orderigs"),
    ('graphs = ["g"]\nreps = 0\n', "reps"),
    ('graphs = ["g"]\nscale = "huge"\n', "scale"),
    ('graphs = ["g"]\nconfigs = [[256]]\n', "configs"),
    ('graphs = []\n', "graphs"),
    ('graphs = ["g"]\norderings = ["random"]\n', "orderings"),
    ('graphs = ["g"]\nmethods = ["fast"]\n', "methods"),
    ('graphs = ["g"]\n[methods.tpe]\nsyncs = ["never"]\n', "methods.tpe.syncs"),
    ('graphs = ["g"]\n[methods.tpe]\nspeed = 1\n', "methods.tpe.speed"),
    ('graphs = ["g"]\n[program]\ncommand = "{sssp} {input}"\n', "output"),
    ('graphs = ["g"]\n[program]\ncommand = "{sssp} {input} {output} {nope}"\n', "nope"),
    ('graphs = ["g"\n', "TOML"),
])
def test_config_errors_name_file_and_key(tmp_path, text, key):
    with pytest.raises(ConfigError) as error:
        load_config(write_config(tmp_path, text))
    assert "s.toml" in str(error.value) and key in str(error.value)


def test_overrides_and_command_rendering(tmp_path):
    config = load_config(write_config(tmp_path, 'graphs = ["g.txt"]\n'), scale="0.25", methods="segscan",
                         reps=2, timeout=3, graphs="a.txt,rome99")
    assert config.scale == 0.25 and config.reps == 2 and config.timeout_s == 3.0
    assert config.graphs == ("a.txt", "rome99")
    cell = expand(config)[0]
    argv = render_command(config.command, cell, tmp_path / "in put.txt", tmp_path / "out.txt")
    assert argv[1:3] == ["-input", str(tmp_path / "in put.txt")]
    assert argv[-5:] == ["bmf", "-sync", "outcore", "-usesmem", "yes"]
    with pytest.raises(ConfigError, match="--methods"):
        load_config(write_config(tmp_path, 'graphs = ["g.txt"]\nmethods = ["bmf"]\n'), methods="tpe")


def test_warmup_runs_come_first_and_repetitions_are_passes(tmp_path):
    config = load_config(write_config(tmp_path, 'graphs = ["g.txt"]\nreps = 3\nwarmup = 1\n'))
    cells = expand(config)
    warm = [c for c in cells if c.rep < 0]
    assert len(warm) == 13 and cells[:13] == warm and {c.rep for c in warm} == {-1}
    assert {(c.bsize, c.bcount) for c in warm} == {config.configs[0]} and all("warm-up" in c.label for c in warm)
    reps = [c.rep for c in cells[13:]]
    assert reps == sorted(reps) and len(reps) == 3 * 65          # rep 0 of every setting, then rep 1, ...
    assert len({c.run_id for c in cells}) == len(cells)
    with pytest.raises(ConfigError, match="warmup"):
        load_config(write_config(tmp_path, 'graphs = ["g.txt"]\nwarmup = -1\n'))
