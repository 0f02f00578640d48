"""Config: YAML + CLI overrides, validated once with messages a user understands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_configs_load() -> None:
    local = load_config(str(ROOT / "conf" / "local.yaml"))
    assert local.is_demo and local.engine == "auto"
    assert local.spark_conf == {}
    with pytest.raises(ConfigError, match="no output folder"):
        load_config(str(ROOT / "conf" / "cluster.yaml"))
    cluster = load_config(str(ROOT / "conf" / "cluster.yaml"), output="/tmp/x")
    assert cluster.engine == "native" and cluster.master is None


def test_local_yaml_spells_out_the_built_in_defaults() -> None:
    """The CLI says: without --config the defaults equal conf/local.yaml."""
    assert load_config(str(ROOT / "conf" / "local.yaml")) == load_config(None)


def test_flags_override_file(tmp_path: Path) -> None:
    cfg = load_config(str(ROOT / "conf" / "local.yaml"), queues="q", members="m",
                      output=str(tmp_path), snapshots=["s1", "s2"], engine="offline")
    assert (cfg.queues, cfg.members, cfg.snapshots, cfg.engine) == ("q", "m", ("s1", "s2"),
                                                                    "offline")
    assert not cfg.is_demo
    assert cfg.what_if == "findings"
    assert load_config(str(ROOT / "conf" / "local.yaml"), what_if="off").what_if == "off"


def test_what_if_flag_parses() -> None:
    from jobs.cli import build_parser

    args = build_parser().parse_args(["audit", "--what-if", "all"])
    assert args.what_if == "all"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"queues": "q"}, "--queues / inputs.queues is set but --members / inputs.members "
                          "is not"),
        ({"offsets": "o"}, "--offsets / inputs.offsets needs --queues / inputs.queues and "
                           "--members / inputs.members"),
        ({"engine": "fast"}, "storage.engine must be one of"),
        ({"buckets": -1}, "--buckets / assign.buckets must be >= 0"),
        ({"what_if": "some"}, "reports.what_if must be one of all, findings, off"),
        ({"snapshots": ["s1", "/" * 82]},
         r"snapshot '///.*'… \(82 characters\) can name no output partition"),
    ],
)
def test_bad_settings_are_explained(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, **overrides)


@pytest.mark.parametrize("length", [82, 300])
def test_a_snapshot_no_partition_holds_is_refused_by_audit_and_capture(capsys,
                                                                        length: int) -> None:
    """`audit --snapshot` of such an id added its rejects again on each re-run, and
    `capture --snapshot` wrote inputs no audit could write: both flags refuse it."""
    from jobs.cli import build_parser

    long_id = "%" * length
    fits = "%" * 81  # 12 + 3 x 81 = 255 bytes: snapshot_id=%25%25...
    assert build_parser().parse_args(["audit", "--snapshot", fits]).snapshots == [fits]
    for args in (["audit"], ["capture", "import", "f.txt", "--cluster", "c"]):
        with pytest.raises(SystemExit) as exit_:
            build_parser().parse_args([*args, "--snapshot", long_id])
        assert exit_.value.code == 2
        assert (f"--snapshot: {'%' * 60!r}… ({length} characters) is too long to name the "
                "outputs' partition folder") in capsys.readouterr().err


def test_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("inputs: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(str(bad))
    # a tab-indented file: PyYAML's "found character '\t' that cannot start any token"
    tabbed = tmp_path / "tabbed.yaml"
    tabbed.write_text("spark:\n\tmaster: local[1]\n")
    with pytest.raises(ConfigError, match=r"is not valid YAML \(a tab where YAML takes "
                                          r"spaces: indent with spaces\): "):
        load_config(str(tabbed))


def test_yaml_bare_off_is_the_what_if_mode(tmp_path: Path) -> None:
    # YAML 1.1 reads a bare `off` as false: it means the what-if's `off`
    conf = tmp_path / "c.yaml"
    conf.write_text("reports:\n  what_if: off\n")
    assert load_config(str(conf)).what_if == "off"
    conf.write_text("reports:\n  what_if: yes\n")
    with pytest.raises(ConfigError, match=r"reports.what_if must be one of all, findings, off"):
        load_config(str(conf))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("inputs: [a, b]\n", r"inputs must be a mapping .*not \['a', 'b'\]"),
        ("spark:\n  conf: [1]\n", r"spark.conf must be a mapping"),
        ("spark:\n  conf:\n    spark.a:\n", r"spark.conf.spark.a must be a value, not None"),
        ("assign:\n  buckets: many\n", r"assign.buckets must be a whole number, not 'many'"),
        ("demo:\n  groups: 2.5\n", r"demo.groups must be a whole number, not 2.5"),
        ("strict: maybe\n", r"strict must be true or false, not 'maybe'"),
        ("spark:\n  progress: 1\n", r"spark.progress must be true or false, not 1"),
        ("inputs:\n  queues: [q]\n", r"inputs.queues must be a string"),
        # a key the job does not read would have been ignored while the run used the default
        ("reports:\n  what-if: off\n", r"unknown setting reports.what-if; did you mean what_if\?"),
        ("outptu: x\n", r"unknown setting outptu; did you mean output\? the top level takes"),
        ("demo:\n  size: 3\n", r"unknown setting demo.size; demo takes groups, seed"),
        # PyYAML keeps the last of two equal keys: the first was dropped silently
        ("output: a\nstrict: true\noutput: b\n", r"output is given twice \(lines 1 and 3\)"),
        ("demo:\n  seed: 1\nstrict: true\ndemo:\n  groups: 2\n",
         r"demo is given twice \(lines 1 and 4\)"),
        ("spark:\n  conf:\n    spark.a: 1\n    spark.a: 2\n",
         r"spark.a is given twice \(lines 3 and 4\)"),
    ],
)
def test_wrong_types_and_unknown_keys_are_named(tmp_path: Path, text: str, message: str) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text(text)
    with pytest.raises(ConfigError, match=rf"config file {conf}: {message}"):
        load_config(str(conf))


def test_spark_conf_keys_are_free_form(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("spark:\n  conf:\n    spark.any.thing: 1\n    spark.b: true\n")
    assert load_config(str(conf)).spark_conf == {"spark.any.thing": "1", "spark.b": "true"}


PATH_FLAGS = ("--config", "--queues", "--members", "--offsets", "--observed", "--output")


@pytest.mark.parametrize("flag", PATH_FLAGS)
@pytest.mark.parametrize("value", ["", "  "])
def test_a_blank_path_flag_is_refused_when_parsed(capsys, flag: str, value: str) -> None:
    """An unset shell variable: `--offsets ""` ran without lag and without the warning a
    run without --offsets gets, `--config ""` and `--queues "" --members ""` ran the demo."""
    from jobs.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["audit", flag, value])
    assert exit_.value.code == 2
    assert f"argument {flag}: must not be blank" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["queues", "members", "offsets", "observed", "output"])
def test_a_blank_path_from_any_source_is_refused_naming_the_setting(
        tmp_path: Path, name: str) -> None:
    key = "output" if name == "output" else f"inputs.{name}"
    both = {"queues": "q", "members": "m"}
    with pytest.raises(ConfigError, match=f"--{name} / {key} is blank"):
        load_config(None, **{**both, name: " "})
    lines = {"queues": "q", "members": "m", name: '""'}
    inputs = "".join(f"  {k}: {v}\n" for k, v in lines.items() if k != "output")
    conf = tmp_path / "c.yaml"
    conf.write_text(f"inputs:\n{inputs}" + ('output: ""\n' if name == "output" else ""))
    with pytest.raises(ConfigError, match=f"--{name} / {key} is blank"):
        load_config(str(conf))


def test_a_blank_config_path_is_refused() -> None:
    with pytest.raises(ConfigError, match="--config is blank"):
        load_config("")


def test_the_file_alone_is_named_by_both_spellings(tmp_path: Path) -> None:
    """`inputs.queues` alone in a file named --queues and --members, flags never given."""
    conf = tmp_path / "c.yaml"
    conf.write_text("inputs:\n  queues: q\n")
    with pytest.raises(ConfigError, match=r"--queues / inputs.queues is set but "
                                          r"--members / inputs.members is not"):
        load_config(str(conf))


@pytest.mark.parametrize(
    ("text", "shown"),
    [("output: 1.10\n", "output must be a string, not 1.1 \\(YAML read it as a float\\): "
                        'quote it, e.g. output: "..."'),
     ("output: 0123\n", "output must be a string, not 83 "),
     ("inputs:\n  queues: 2026\n  members: m\n", "inputs.queues must be a string, not 2026"),
     ("spark:\n  master: 4\n", "spark.master must be a string, not 4")],
)
def test_a_path_yaml_reads_as_a_number_is_refused(tmp_path: Path, text: str,
                                                 shown: str) -> None:
    """`output: 1.10` was the folder '1.1', `0123` was '83': another folder, silently."""
    conf = tmp_path / "c.yaml"
    conf.write_text(text)
    with pytest.raises(ConfigError, match=f"config file {conf}: {shown}"):
        load_config(str(conf))
    conf.write_text('output: "1.10"\n')
    assert load_config(str(conf)).output == "1.10"


def test_a_merge_key_may_still_be_overridden(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("demo:\n  <<: {groups: 3, seed: 1}\n  groups: 4\n")
    config = load_config(str(conf))
    assert (config.demo_groups, config.demo_seed) == (4, 1)


def test_a_file_that_is_not_utf8_or_not_a_regular_file_is_named(tmp_path: Path) -> None:
    """Latin-1 was a UnicodeDecodeError traceback after the JVM started; a folder, a FIFO
    or /dev/null "did not exist"."""
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("output: /tmp/caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=f"config file {latin} is not UTF-8 text"):
        load_config(str(latin))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (tmp_path, fifo, Path("/dev/null")):
        with pytest.raises(ConfigError, match=f"config file {path} is not a regular file"):
            load_config(str(path))


@pytest.mark.parametrize(
    ("text", "flag", "message"),
    [
        ("storage:\n  engine: fast\n", {"engine": "fast"},
         r"storage.engine must be one of auto, native, offline, not 'fast'"),
        ("reports:\n  what_if: some\n", {"what_if": "some"},
         r"reports.what_if must be one of all, findings, off, not 'some'"),
        ("assign:\n  buckets: -1\n", {"buckets": -1},
         r"--buckets / assign.buckets must be >= 0"),
        ("demo:\n  groups: 50001\n", {"demo_groups": 50_001},
         r"--demo-groups / demo.groups must be >= 0"),
        ("demo:\n  seed: -1\n", {"demo_seed": -1}, r"demo.seed must be >= 0, not -1"),
        ("output: ' '\n", {"output": " "}, r"--output / output is blank"),
    ],
)
def test_a_refused_value_names_the_file_it_came_from(tmp_path: Path, text: str, flag: dict,
                                                      message: str) -> None:
    """These were refused without naming the file; the same value from a flag is refused
    as before, naming no file (the file did not give it)."""
    conf = tmp_path / "site.yaml"
    conf.write_text(text)
    with pytest.raises(ConfigError, match=f"^config file {conf}: {message}"):
        load_config(str(conf))
    with pytest.raises(ConfigError, match=f"^{message}"):
        load_config(str(conf), **flag)


def test_a_negative_demo_seed_is_refused(tmp_path: Path) -> None:
    """numpy's generator refused it minutes into the run (exit 1)."""
    conf = tmp_path / "c.yaml"
    conf.write_text("demo:\n  seed: -5\n")
    with pytest.raises(ConfigError, match=r"demo.seed must be >= 0, not -5"):
        load_config(str(conf))
    assert load_config(None, demo_seed=0).demo_seed == 0


def test_buckets_have_an_upper_bound_named_by_flag_and_key(tmp_path: Path) -> None:
    """10**20 reached Py4J as a NumberFormatException; 2e9 would have allocated tens of GB."""
    assert load_config(None, buckets=100_000).buckets == 100_000  # jobs.config.MAX_BUCKETS
    for buckets in (100_001, 10**20):
        with pytest.raises(ConfigError, match=rf"--buckets / assign.buckets must be >= 0 and "
                                              rf"at most 100,000 .*not {buckets}"):
            load_config(None, buckets=buckets)
    conf = tmp_path / "c.yaml"
    conf.write_text("assign:\n  buckets: 2000000000\n")
    with pytest.raises(ConfigError, match=r"--buckets / assign.buckets"):
        load_config(str(conf))


def test_demo_groups_have_an_upper_bound_named_by_flag_and_key(tmp_path: Path) -> None:
    """10**9 groups asked the driver's Python for some 2x10^11 demo rows."""
    assert load_config(None, demo_groups=50_000).demo_groups == 50_000  # MAX_DEMO_GROUPS
    for groups in (-1, 50_001, 10**9):
        with pytest.raises(ConfigError, match=rf"--demo-groups / demo.groups must be >= 0 "
                                              rf"and at most 50,000 .*not {groups}"):
            load_config(None, demo_groups=groups)
    conf = tmp_path / "c.yaml"
    conf.write_text("demo:\n  groups: 1000000000\n")
    with pytest.raises(ConfigError, match=r"--demo-groups / demo.groups"):
        load_config(str(conf))


def test_the_progress_flag_beats_the_files_spark_setting(tmp_path: Path) -> None:
    """Flags override the file: the file's spark.ui.showConsoleProgress beat the flag."""
    conf = tmp_path / "c.yaml"
    conf.write_text("spark:\n  conf:\n    spark.ui.showConsoleProgress: true\n"
                    "    spark.a: b\n")
    assert load_config(str(conf)).spark_conf["spark.ui.showConsoleProgress"] == "true"
    for flag in (True, False):
        config = load_config(str(conf), spark_progress=flag)
        assert config.spark_progress is flag and config.spark_conf == {"spark.a": "b"}


def test_a_home_folder_path_is_expanded_from_flags_and_the_file(tmp_path: Path,
                                                                monkeypatch) -> None:
    """A `~` the shell leaves (quoted, or in a config file) was a folder named `~` to
    Spark and the home folder to delta-rs: the run wrote one place and read another."""
    from capture.cli import _local_folder
    from jobs.cli import build_parser

    monkeypatch.setenv("HOME", str(tmp_path))
    args = build_parser().parse_args(["audit", "--queues", "~/q", "--members", "~/m",
                                      "--output", "~/out", "--offsets", "s3a://b/~x"])
    assert (args.queues, args.members, args.output, args.offsets) == (
        f"{tmp_path}/q", f"{tmp_path}/m", f"{tmp_path}/out", "s3a://b/~x")
    report = build_parser().parse_args(["report", "--output", "~/out", "--html", "~/p.html"])
    assert (report.output, report.html) == (f"{tmp_path}/out", f"{tmp_path}/p.html")
    assert _local_folder("~/capture") == f"{tmp_path}/capture"
    file = tmp_path / "c.yaml"
    file.write_text("inputs:\n  queues: ~/q\n  members: ~/m\noutput: ~/out\n")
    cfg = load_config(str(file))
    assert (cfg.queues, cfg.members, cfg.output) == (
        f"{tmp_path}/q", f"{tmp_path}/m", f"{tmp_path}/out")


@pytest.mark.parametrize(("text", "key"), [
    ("output: ~\n", "output"),
    ("inputs:\n  queues: ~\n  members: ~\n", "inputs.queues"),
    ("inputs: {queues: /q, members: /m, offsets: ~}\n", "inputs.offsets")])
def test_a_bare_tilde_in_the_file_is_refused_naming_it(tmp_path: Path, text: str,
                                                       key: str) -> None:
    """YAML reads a bare `~` as null: `output: ~` was "no output folder" for a user who
    had set one, and `queues: ~, members: ~` ran the demo. `null` still leaves a key
    unset, as conf/local.yaml writes it."""
    file = tmp_path / "c.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError, match=rf"c\.yaml: {key} is a bare `~`, which YAML reads "
                                          r"as null \(no value\), not as the home folder"):
        load_config(str(file))
    if key.startswith("inputs."):
        file.write_text(text.replace("~", "null"))
        assert load_config(str(file)).offsets is None


def test_demo_groups_beside_inputs_is_said_to_be_ignored() -> None:
    """`--demo-groups` with --queues/--members was ignored without a word."""
    from jobs.cli import audit_config, build_parser, ignored_flags

    args = build_parser().parse_args(["audit", "--queues", "q", "--members", "m",
                                      "--demo-groups", "20"])
    assert ignored_flags(args, audit_config(args)) == [
        "--demo-groups 20 is for the demo only: this run audits --queues / --members and "
        "ignores it"]
    demo = build_parser().parse_args(["audit", "--demo-groups", "20"])
    assert ignored_flags(demo, audit_config(demo)) == []
