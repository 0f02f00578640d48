"""Config: YAML + CLI overrides, validated once with messages a user understands."""

from __future__ import annotations

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
        ({"queues": "q"}, "--queues is set but --members is not"),
        ({"offsets": "o"}, "--offsets needs --queues and --members"),
        ({"engine": "fast"}, "storage.engine must be one of"),
        ({"buckets": -1}, "assign.buckets must be >= 0"),
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
