"""One typed, validated configuration: conf/<env>.yaml overridden by CLI flags.

The defaults live in one place, `AuditConfig`'s fields; conf/local.yaml spells out the
same values (a test holds them equal).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from storage.delta import ENGINES
from vocabulary.columns import WHAT_IF_MODES
from vocabulary.errors import ConfigError
from vocabulary.partitions import shown_id, unfit_reason

# The path settings, each with its key in a config file (the flag is --NAME).
PATH_SETTINGS = {"queues": "inputs.queues", "members": "inputs.members",
                 "offsets": "inputs.offsets", "observed": "inputs.observed", "output": "output"}
# The most buckets (`--buckets`, `assign.buckets`): 25x the automatic count's cap
# (`jobs.sizing.MAX_PARTITIONS`, 4,000). Each bucket is a Spark partition and a Python call
# (more than the groups only adds empty tasks), and `rebalance_udfs.spark.buckets.
# partition_keys` allocates about 4 longs per bucket: 10^20 reached Py4J as a
# NumberFormatException, 2e9 would have asked for tens of GB.
MAX_BUCKETS = 100_000
# The most demo groups (`--demo-groups`, `demo.groups`): the demo is built in the driver's
# Python, about 225 input rows per group (`jobs.launch.DEMO_ROWS_PER_GROUP`), so 50,000 is
# about 11M rows, the benchmark's largest; 10^9 asked it for some 2x10^11 rows
MAX_DEMO_GROUPS = 50_000


def _both(name: str, key: str | None = None) -> str:
    """A setting as the user may have given it: its flag and its config file key."""
    return f"--{name} / {key or PATH_SETTINGS[name]}"


@dataclass(frozen=True)
class AuditConfig:
    queues: str | None = None
    members: str | None = None
    offsets: str | None = None
    observed: str | None = None
    output: str | None = "output/rebalance-audit"
    snapshots: tuple[str, ...] = ()
    engine: str = "auto"
    master: str | None = "local[*]"
    # extra Spark settings; shuffle partitions are sized from the data unless set here
    spark_conf: dict[str, str] = field(default_factory=dict)
    # Spark's console progress bars (off: the run prints one line per step instead)
    spark_progress: bool = False
    # groups are hashed into this many pandas-UDF calls; 0 = sized from the data
    buckets: int = 0
    demo_groups: int = 300
    demo_seed: int = 7
    compare_strategies: bool = False
    run_id: str | None = None
    # input problems (a snapshot missing from one input, an empty input) fail the run
    strict: bool = False
    # which groups get what-if candidates: all, findings (those with a finding), off
    what_if: str = "findings"

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise _Invalid("engine", f"storage.engine must be one of {', '.join(ENGINES)}, "
                                     f"not {self.engine!r}")
        for name in PATH_SETTINGS:
            value = getattr(self, name)
            if value is not None and not value.strip():  # an unset shell variable, or ""
                raise _Invalid(name, f"{_both(name)} is blank: give a path, or leave it out")
        given = [n for n in ("queues", "members") if getattr(self, n)]
        if len(given) == 1:
            missing = "members" if given == ["queues"] else "queues"
            raise ConfigError(f"{_both(given[0])} is set but {_both(missing)} is not: an "
                              "audit needs both tables (or neither, to run the embedded demo)")
        for name in ("offsets", "observed"):
            if getattr(self, name) and not given:
                raise ConfigError(f"{_both(name)} needs {_both('queues')} and "
                                  f"{_both('members')}")
        if not self.output:
            raise ConfigError("no output folder: set `output:` in the config or pass --output")
        if self.what_if not in WHAT_IF_MODES:
            raise _Invalid("what_if", f"reports.what_if must be one of "
                                      f"{', '.join(WHAT_IF_MODES)}, not {self.what_if!r}")
        if not 0 <= self.buckets <= MAX_BUCKETS:
            raise _Invalid("buckets", f"--buckets / assign.buckets must be >= 0 and at most "
                                      f"{MAX_BUCKETS:,} (0: sized from the inputs), not "
                                      f"{self.buckets}")
        if not 0 <= self.demo_groups <= MAX_DEMO_GROUPS:
            raise _Invalid("demo_groups", f"--demo-groups / demo.groups must be >= 0 and at "
                                          f"most {MAX_DEMO_GROUPS:,} (about 11M input rows; "
                                          f"benchmarks/generate.py makes larger inputs), not "
                                          f"{self.demo_groups}")
        if self.demo_seed < 0:  # numpy's generator refuses it, minutes later
            raise _Invalid("demo_seed", f"demo.seed must be >= 0, not {self.demo_seed}")
        for snapshot in self.snapshots:
            if not snapshot.strip():
                raise ConfigError(f"snapshot {snapshot!r} is blank")
            why = unfit_reason(snapshot)
            if why is not None:
                raise ConfigError(f"snapshot {shown_id(snapshot)} can name no output partition: "
                                  f"it is {why}")

    @property
    def is_demo(self) -> bool:
        return not (self.queues or self.members)

    @property
    def compares_strategies(self) -> bool:
        """The demo always writes the strategy comparison."""
        return self.compare_strategies or self.is_demo


def load_config(path: str | None, **overrides: Any) -> AuditConfig:
    """Read the YAML file (if any), then apply non-None overrides (the CLI flags)."""
    raw: dict[str, Any] = {}
    if path is not None:
        raw = _read_file(path)
    read = _Reader(str(path), raw)
    d = AuditConfig  # the defaults, one place
    values: dict[str, Any] = {
        "queues": read.location("inputs.queues", None),
        "members": read.location("inputs.members", None),
        "offsets": read.location("inputs.offsets", None),
        "observed": read.location("inputs.observed", None),
        "output": read.location("output", d.output),
        "engine": read.text("storage.engine", d.engine),
        "master": read.text("spark.master", d.master),
        "spark_conf": read.spark_settings("spark.conf"),
        "spark_progress": read.flag("spark.progress", d.spark_progress),
        "buckets": read.count("assign.buckets", d.buckets),
        "demo_groups": read.count("demo.groups", d.demo_groups),
        "demo_seed": read.count("demo.seed", d.demo_seed),
        "compare_strategies": read.flag("reports.compare_strategies", d.compare_strategies),
        "strict": read.flag("strict", d.strict),
        "what_if": read.what_if("reports.what_if", d.what_if),
    }
    given = {k: v for k, v in overrides.items() if v not in (None, (), [])}
    values.update(given)
    if overrides.get("spark_progress") is not None:  # the flag beats the file's Spark setting
        values["spark_conf"] = {k: v for k, v in values["spark_conf"].items()
                                if k != "spark.ui.showConsoleProgress"}
    values["snapshots"] = tuple(values.get("snapshots") or ())
    try:
        return AuditConfig(**values)
    except _Invalid as exc:
        if path is None or exc.setting in given:
            raise
        raise ConfigError(f"config file {path}: {exc}") from None


class _Invalid(ConfigError):
    """A setting's value refused: `load_config` names the file when the value came from
    it, not from a flag (`storage.engine: fast` did not say which file said so)."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


def _read_file(path: str) -> dict[str, Any]:
    """The config file's top-level mapping; any reason it cannot be one is a ConfigError
    naming the file (a blank --config ran the demo; a file that is not UTF-8 was a
    traceback after the JVM started; a folder or a FIFO "did not exist")."""
    if not path.strip():
        raise ConfigError("--config is blank: give a YAML file, or leave it out")
    file = Path(path)
    if not file.exists():
        raise ConfigError(f"config file {path} does not exist")
    if not file.is_file():
        raise ConfigError(f"config file {path} is not a regular file")
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {exc.start}: "
                          f"{exc.reason})") from exc
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc.strerror}") from exc
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader) or {}
    except _DuplicateKey as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        tabs = (" (a tab where YAML takes spaces: indent with spaces)"
                if "found character '\\t'" in str(exc) else "")
        raise ConfigError(f"config file {path} is not valid YAML{tabs}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    _refuse_bare_tilde(raw, path)
    return raw


class _BareTilde:
    """A value written as a bare `~`: YAML's null, where a path setting meant the home
    folder (`output: ~` asked for an output folder the user had set; `inputs: {queues: ~,
    members: ~}` ran the demo)."""

    def __repr__(self) -> str:
        return "~"


def _refuse_bare_tilde(section: dict[Any, Any], path: str, where: str = "") -> None:
    for key, value in section.items():
        name = f"{where}{key}"
        if isinstance(value, _BareTilde):
            raise ConfigError(f"config file {path}: {name} is a bare `~`, which YAML reads "
                              "as null (no value), not as the home folder: write the path "
                              "(`~/audit`), or null to leave it unset")
        if isinstance(value, dict):
            _refuse_bare_tilde(value, path, f"{name}.")


class _DuplicateKey(Exception):
    pass


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader refusing a key given twice in one mapping (`output:` twice, a
    section twice): PyYAML keeps the last silently. Keys a merge (`<<:`) brings in may be
    overridden, as YAML says."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                first = lines.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:  # an unhashable key: the base constructor says so
                continue
            if first != key_node.start_mark.line + 1:
                raise _DuplicateKey(f"{key} is given twice (lines {first} and "
                                    f"{key_node.start_mark.line + 1}); the second would "
                                    "silently replace the first")
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_null(self, node: yaml.Node) -> Any:
        return _BareTilde() if node.value == "~" else None


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:null", _UniqueKeyLoader.construct_yaml_null)


# every key a config file may hold, per section ("" the top level; spark.conf's are Spark's)
KNOWN_KEYS: dict[str, tuple[str, ...]] = {
    "": ("inputs", "output", "storage", "spark", "strict", "reports", "assign", "demo"),
    "inputs": ("queues", "members", "offsets", "observed"),
    "storage": ("engine",),
    "spark": ("master", "progress", "conf"),
    "reports": ("compare_strategies", "what_if"),
    "assign": ("buckets",),
    "demo": ("groups", "seed"),
}


class _Reader:
    """Typed values of a config file's mapping, by dotted key (`reports.what_if`); a wrong
    type or an unknown key is a ConfigError naming the file and the key, not Python's words
    about a list or a str. Every section is checked once, when the file is read."""

    def __init__(self, path: str, raw: dict[str, Any]) -> None:
        self.path = path
        self._known(raw, "")
        self.sections: dict[str, dict[str, Any]] = {"": raw}
        for name in KNOWN_KEYS:
            if name:
                self.sections[name] = self._mapping(raw.get(name), name)
                self._known(self.sections[name], name)
        # Spark's own settings: free-form keys
        self.sections["spark.conf"] = self._mapping(self.sections["spark"].get("conf"),
                                                    "spark.conf")

    def _error(self, key: str, wants: str, value: Any) -> ConfigError:
        return ConfigError(f"config file {self.path}: {key} must be {wants}, not {value!r}")

    def _mapping(self, value: Any, key: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._error(key, "a mapping (indented `name: value` lines)", value)
        return value

    def _known(self, section: dict[str, Any], name: str) -> None:
        """A key the job does not read is a mistake, not a setting left out silently (a
        `what-if: off` would have run the what-if)."""
        keys = KNOWN_KEYS[name]
        for key in section:
            if key not in keys:
                where = f"{name}.{key}" if name else str(key)
                close = difflib.get_close_matches(str(key).replace("-", "_"), keys, n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                raise ConfigError(f"config file {self.path}: unknown setting {where}; {hint}"
                                  f"{name or 'the top level'} takes {', '.join(keys)}")

    def _value(self, key: str, default: Any) -> Any:
        section, _, leaf = key.rpartition(".")
        return self.sections[section].get(leaf, default)

    def text(self, key: str, default: str | None) -> str | None:
        """A path or a name: a YAML string. A bare number is refused, not turned into one:
        `output: 1.10` was the folder '1.1', `0123` was '83'."""
        value = self._value(key, default)
        if value is None or isinstance(value, str):
            return value
        leaf = key.rpartition(".")[2]
        raise ConfigError(f"config file {self.path}: {key} must be a string, not {value!r} "
                          f"(YAML read it as a {type(value).__name__}): quote it, e.g. "
                          f"{leaf}: \"...\"")

    def location(self, key: str, default: str | None) -> str | None:
        """A path setting: `text`, `~` expanded (`output: ~/audit` was a folder named `~`
        to Spark and the home folder to delta-rs)."""
        value = self.text(key, default)
        return os.path.expanduser(value) if value else value

    def flag(self, key: str, default: bool) -> bool:
        value = self._value(key, default)
        if not isinstance(value, bool):
            raise self._error(key, "true or false", value)
        return value

    def count(self, key: str, default: int) -> int:
        value = self._value(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._error(key, "a whole number", value)
        return value

    def spark_settings(self, key: str) -> dict[str, str]:
        """Spark's own settings as the strings Spark reads: a YAML true is "true" (Python's
        "True" is not every reader's), a setting left empty is a mistake, not "None"."""
        settings = {}
        for name, value in self.sections[key].items():
            if value is None or isinstance(value, (dict, list)):
                raise self._error(f"{key}.{name}", "a value", value)
            settings[str(name)] = str(value).lower() if isinstance(value, bool) else str(value)
        return settings

    def what_if(self, key: str, default: str) -> str:
        value = self._value(key, default)
        if value is False:  # YAML reads a bare `off` (and `no`, `false`) as false
            return "off"
        if not isinstance(value, str):
            raise self._error(key, f"one of {', '.join(WHAT_IF_MODES)}", value)
        return value
