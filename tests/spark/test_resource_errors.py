"""A real OutOfMemoryError of the session's JVM, through the command line's `main`: said
as the setting to change, exit 2, no traceback; the JVM lives on (the allocation failed
in py4j's thread, not a task's)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


def test_the_jvm_out_of_heap_is_said_as_the_setting_to_change(spark, tmp_path, monkeypatch,
                                                              capsys) -> None:
    from jobs import cli

    def runs_out_of_heap(args) -> int:
        jvm = spark.sparkContext._jvm
        # 8 GiB of longs in a 4g heap: java.lang.OutOfMemoryError: Java heap space
        jvm.java.lang.reflect.Array.newInstance(jvm.java.lang.Long.TYPE, 1 << 30)
        return cli.EXIT_OK

    monkeypatch.setitem(cli.JOBS, "audit", runs_out_of_heap)
    code = cli.main(["audit", "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == cli.EXIT_USER
    assert err.startswith("rebalance-audit: error: Spark's JVM ran out of memory "
                          "(java.lang.OutOfMemoryError: Java heap space): give it more with "
                          "the driver's heap: `--driver-memory 6g`")
    assert "Traceback" not in err
    assert spark.range(3).count() == 3
