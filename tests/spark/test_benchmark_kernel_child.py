"""The benchmark's bare kernel and bare pass (`benchmarks.run.kernel_child`) run on the
job's current code: they feed the UDF bodies frames built by hand, and a column the pass
came to read (`pop_share_queue_num`) failed the benchmark's kernel child while every
test passed."""

from __future__ import annotations

import argparse

import benchmarks.generate as generate
from benchmarks.run import kernel_child


def test_the_bare_kernel_and_pass_run_on_a_small_generated_cluster(spark, tmp_path,
                                                                   monkeypatch) -> None:
    monkeypatch.setattr(generate, "DATA_ROOT", tmp_path)
    manifest = generate.generate(spark, 3_000, log=lambda _: None)
    result = kernel_child(argparse.Namespace(
        manifest=str(tmp_path / manifest["size"] / "manifest.json"), what_if="findings",
        buckets=2, all_at_once_max=10**9))
    assert "errors" not in result
    assert result["queue_rows"] == manifest["rows"]["expected_assignments"] > 0
    assert result["output_rows"] >= result["queue_rows"]
    assert result["pass_output_rows"] >= result["output_rows"]
    assert len(result["per_bucket"]) == 2
