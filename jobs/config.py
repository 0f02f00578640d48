"""One typed, validated configuration: conf/<env>.yaml overridden by CLI flags.

The defaults live in one place, `AuditConfig`'s fields; conf/local.yaml spells out the
same values (a test holds them equal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from storage.delta import ENGINES
from vocabulary.columns import WHAT_IF_MODES
from vocabulary.errors import ConfigError


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
            raise ConfigError(f"storage.engine must be one of {', '.join(ENGINES)}, "
                              f"not {self.engine!r}")
        given = [n for n in ("queues", "members") if getattr(self, n)]
        if len(given) == 1:
            missing = "members" if given == ["queues"] else "queues"
            raise ConfigError(f"--{given[0]} is set but --{missing} is not: an audit needs both "
                              "tables (or neither, to run the embedded demo)")
        if self.offsets and not given:
            raise ConfigError("--offsets needs --queues and --members")
        if self.observed and not given:
            raise ConfigError("--observed needs --queues and --members")
        if not self.output:
            raise ConfigError("no output folder: set `output:` in the config or pass --output")
        if self.what_if not in WHAT_IF_MODES:
            raise ConfigError(f"reports.what_if must be one of {', '.join(WHAT_IF_MODES)}, "
                              f"not {self.what_if!r}")
        if self.buckets < 0:
            raise ConfigError("assign.buckets must be >= 0")
        if self.demo_groups < 0:
            raise ConfigError("demo.groups must be >= 0")

    @property
    def is_demo(self) -> bool:
        return not (self.queues or self.members)


def load_config(path: str | None, **overrides: Any) -> AuditConfig:
    """Read the YAML file (if any), then apply non-None overrides (the CLI flags)."""
    raw: dict[str, Any] = {}
    if path:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            raw = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
        if not isinstance(raw, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
    inputs = raw.get("inputs") or {}
    spark = raw.get("spark") or {}
    reports = raw.get("reports") or {}
    demo = raw.get("demo") or {}
    d = AuditConfig  # the defaults, one place
    try:
        values: dict[str, Any] = {
            "queues": inputs.get("queues"),
            "members": inputs.get("members"),
            "offsets": inputs.get("offsets"),
            "observed": inputs.get("observed"),
            "output": raw.get("output", d.output),
            "engine": (raw.get("storage") or {}).get("engine", d.engine),
            "master": spark.get("master", d.master),
            "spark_conf": {str(k): str(v) for k, v in (spark.get("conf") or {}).items()},
            "spark_progress": bool(spark.get("progress", d.spark_progress)),
            "buckets": int((raw.get("assign") or {}).get("buckets", d.buckets)),
            "demo_groups": int(demo.get("groups", d.demo_groups)),
            "demo_seed": int(demo.get("seed", d.demo_seed)),
            "compare_strategies": bool(reports.get("compare_strategies",
                                                   d.compare_strategies)),
            "strict": bool(raw.get("strict", d.strict)),
            "what_if": str(reports.get("what_if", d.what_if)),
        }
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"config file {path}: {exc}") from exc
    values.update({k: v for k, v in overrides.items() if v not in (None, (), [])})
    values["snapshots"] = tuple(values.get("snapshots") or ())
    return AuditConfig(**values)
