"""`capture import` end to end: files in, Delta tables out, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from jobs import cli as jobs_cli

DATA = Path(__file__).parent.parent / "data" / "capture"


def cli(*argv: str) -> int:
    """`capture ...` through the real entry point (exit codes, messages)."""
    return jobs_cli.main(["capture", *argv])


def test_import_writes_tables_and_replaces_the_snapshot(tmp_path, capsys):
    out = tmp_path / "in"
    files = [str(DATA / n) for n in ("kcg_members_3.7.txt", "kcg_offsets.txt")]
    args = ["import", *files, "--output", str(out), "--cluster", "prod",
            "--snapshot", "s1", "--captured-at", "2026-11-23T10:00:00Z"]
    assert cli(*args) == 0
    assert cli(*args) == 0
    printed = capsys.readouterr().out
    assert "observed" in printed and "5 rows" in printed
    observed = DeltaTable(str(out / "observed")).to_pandas()
    assert len(observed) == 5 and set(observed.cluster) == {"prod"}
    queues = DeltaTable(str(out / "queues")).to_pandas()
    assert str(queues.captured_at.iloc[0]) == "2026-11-23 10:00:00+00:00"


def test_a_capture_without_members_rows_says_an_audit_of_it_audits_nothing(tmp_path,
                                                                          capsys):
    """topicRoute and topicStatus alone: queues, no members row. An audit of it exited 0
    having audited nothing; the capture said nothing of it."""
    files = [str(DATA / n) for n in ("topicRoute_TopicOrder.json", "topicStatus_TopicOrder.txt")]
    assert cli("import", *files, "--output", str(tmp_path / "in"), "--cluster", "prod",
               "--snapshot", "s1") == 0
    printed = capsys.readouterr()
    assert "warning: snapshot s1 of cluster prod has no members row. An audit of it has no " \
           "group to assign: it audits nothing and sends its queues and offsets rows to " \
           "rejects" in printed.err
    assert "queues" in printed.out
    with_members = [*files, str(DATA / "consumerConnection_OrderGroup.txt")]
    assert cli("import", *with_members, "--output", str(tmp_path / "in2"), "--cluster",
               "prod", "--snapshot", "s1") == 0
    assert "no members row" not in capsys.readouterr().err


def test_import_errors_are_exit_2(tmp_path, capsys):
    bad = tmp_path / "x.txt"
    bad.write_text("nothing here\n")
    assert cli("import", str(bad), "--output", str(tmp_path / "o"), "--cluster", "c") == 2
    assert cli("import", str(tmp_path / "missing.txt"), "--output", str(tmp_path / "o"),
               "--cluster", "c") == 2
    assert cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(tmp_path / "o"),
               "--cluster", "c", "--captured-at", "yesterday") == 2
    err = capsys.readouterr().err
    assert "x.txt: unrecognised" in err and "missing.txt" in err and "yesterday" in err
    assert "Traceback" not in err


def test_format_override(tmp_path):
    assert cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(tmp_path / "o"),
               "--cluster", "c", "--format", "kafka-offsets") == 0


@pytest.mark.parametrize("timeout", ["-1", "0", "inf", "nan", "soon"])
def test_kafka_timeout_must_be_positive_seconds(tmp_path, capsys, timeout):
    # librdkafka waits forever on a negative timeout: refused before any connection
    with pytest.raises(SystemExit) as exit_:
        cli("kafka", "--bootstrap-servers", "127.0.0.1:1", "--output", str(tmp_path / "o"),
            "--timeout", timeout)
    assert exit_.value.code == 2
    assert "is not a positive number of seconds" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", ["--cluster", "--snapshot"])
def test_a_blank_name_is_refused(tmp_path, capsys, flag):
    # `--cluster "$CLUSTER"` with the variable unset wrote rows of an empty cluster name
    args = {"--cluster": "c", "--snapshot": "s1", flag: " "}
    with pytest.raises(SystemExit) as exit_:
        cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(tmp_path / "o"),
            *[x for item in args.items() for x in item])
    assert exit_.value.code == 2
    assert f"{flag}: must not be blank" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("output", ["s3://bucket/capture", "abfss://c@a.dfs.core.windows.net/x"])
def test_a_remote_output_is_refused_before_anything_is_read(tmp_path, monkeypatch, capsys,
                                                             output):
    # Path("s3://b/x") is the local folder "s3:/b/x": the capture failed late, after
    # delta-rs had tried the cloud's metadata service for credentials
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        cli("import", str(DATA / "kcg_offsets.txt"), "--output", output, "--cluster", "c")
    assert exit_.value.code == 2
    assert "a capture writes a local folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("inside", ["", "capture"])
def test_a_capture_into_a_delta_table_is_refused(tmp_path, capsys, inside):
    """A capture folder in a Delta table would be deleted by that table's VACUUM (its log
    names none of the capture's files)."""
    table = tmp_path / "events"
    (table / "_delta_log").mkdir(parents=True)
    output = table / inside if inside else table
    with pytest.raises(SystemExit) as exit_:
        cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(output), "--cluster", "c")
    assert exit_.value.code == 2
    assert f"lies in the Delta table at {table}, whose VACUUM" in capsys.readouterr().err
    assert sorted(p.name for p in table.iterdir()) == ["_delta_log"]


def test_a_file_url_output_is_the_folder_it_names(tmp_path):
    assert cli("import", str(DATA / "kcg_offsets.txt"), "--output",
               f"file://{tmp_path}/o", "--cluster", "c", "--format", "kafka-offsets") == 0
    assert (tmp_path / "o" / "offsets" / "_delta_log").is_dir()


def test_a_folder_with_another_kind_of_table_is_refused_before_any_write(tmp_path, capsys):
    # an audit's output root holds a `rejects` table of its own: a capture into it wrote
    # queues, members, offsets and observed, then failed on rejects
    import pyarrow as pa
    from deltalake import write_deltalake

    out = tmp_path / "audit-out"
    audit_rejects = pa.table({c: pa.array(["x"]) for c in (
        "snapshot_id", "cluster", "source_table", "row_json", "reason", "run_id")})
    write_deltalake(str(out / "rejects"), audit_rejects, partition_by=["snapshot_id"])
    files = [str(DATA / n) for n in ("kcg_members_3.7.txt", "kcg_offsets.txt")]
    assert cli("import", *files, "--output", str(out), "--cluster", "c") == 2
    err = capsys.readouterr().err
    assert "rejects table at" in err and "is not a capture's rejects table" in err
    assert "Nothing was written" in err
    assert sorted(p.name for p in out.iterdir()) == ["rejects"]
    assert DeltaTable(str(out / "rejects")).version() == 0


def test_a_file_not_in_utf8_is_exit_2_naming_its_line(tmp_path, capsys):
    """Decoded with replacement, gé and gè would both read g\ufffd: one made-up group."""
    latin1 = tmp_path / "offsets.txt"
    latin1.write_bytes(
        b"GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
        + "g\u00e9 t 0 1 2 1 - - -\ng\u00e8 t 0 1 2 1 - - -\n".encode("latin-1"))
    out = tmp_path / "o"
    assert cli("import", str(latin1), "--output", str(out), "--cluster", "c") == 2
    err = capsys.readouterr().err
    assert "offsets.txt: not UTF-8 text (byte 0xe9 on line 2)" in err and "iconv" in err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_a_capture_time_beyond_utc_is_exit_2(tmp_path, capsys, at):
    assert cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(tmp_path / "o"),
               "--cluster", "c", "--captured-at", at) == 2
    err = capsys.readouterr().err
    assert f"--captured-at '{at}' is out of range in UTC" in err and "Traceback" not in err


@pytest.mark.parametrize("at", ["1899-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])
def test_a_capture_time_the_audit_rejects_is_exit_2(tmp_path, capsys, at):
    """A time before 1900 was written, and the audit then rejected every row of it."""
    assert cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(tmp_path / "o"),
               "--cluster", "c", "--captured-at", at) == 2
    err = capsys.readouterr().err
    assert f"--captured-at '{at}' is before 1900: no capture time" in err
    assert not (tmp_path / "o").exists()
    assert cli("import", str(DATA / "kcg_offsets.txt"), "--output", str(tmp_path / "o"),
               "--cluster", "c", "--captured-at", "1900-01-01T00:00:00Z") == 0


def test_a_value_no_column_holds_stops_the_write_with_the_table_named(tmp_path):
    """The importers reject such lines; should one slip through, nothing is written."""
    from capture.errors import CaptureError
    from capture.tables import Snapshot, write_snapshot

    snap = Snapshot("s1", "c")
    snap.add("queues", topic="t", queue_id=0, max_offset=10**20)
    with pytest.raises(CaptureError, match="the queues table cannot hold a value read"):
        write_snapshot(tmp_path / "o", snap)
    assert not (tmp_path / "o").exists()


def test_kafka_timeout_below_a_millisecond_is_refused(tmp_path, capsys):
    # librdkafka counts whole milliseconds: 0.0001 s was a request timeout of 0 ms
    with pytest.raises(SystemExit) as exit_:
        cli("kafka", "--bootstrap-servers", "127.0.0.1:1", "--output", str(tmp_path / "o"),
            "--timeout", "0.0001")
    assert exit_.value.code == 2
    assert "'0.0001': at least 0.001 seconds" in capsys.readouterr().err


def test_a_quoted_tilde_in_files_and_client_config_is_the_home_folder(tmp_path, monkeypatch,
                                                                     capsys):
    # the shell leaves a quoted `~` to the program: it was a folder named `~`
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "offsets.txt").write_text((DATA / "kcg_offsets.txt").read_text())
    (tmp_path / "c.properties").write_text("bootstrap.servers=elsewhere:9092\n")
    assert cli("import", "~/offsets.txt", "--output", str(tmp_path / "o"),
               "--cluster", "c") == 0
    assert len(DeltaTable(str(tmp_path / "o" / "offsets")).to_pandas()) == 5
    # read (and refused for what it says), not "no such file"
    assert cli("kafka", "--bootstrap-servers", "127.0.0.1:1", "--output",
               str(tmp_path / "k"), "--client-config", "~/c.properties") == 2
    assert "--client-config sets bootstrap.servers" in capsys.readouterr().err


def test_files_that_give_no_row_replace_no_earlier_capture(tmp_path, capsys):
    """A kafka-consumer-groups output cut after its header "succeeded" with 0 rows in
    every table; with --snapshot of an earlier capture it replaced that one by nothing."""
    out = tmp_path / "in"
    args = ["--output", str(out), "--cluster", "prod", "--snapshot", "s1"]
    assert cli("import", str(DATA / "kcg_offsets.txt"), *args) == 0
    kept = DeltaTable(str(out / "offsets")).to_pandas()
    header = tmp_path / "offsets_cut.txt"
    header.write_text((DATA / "kcg_offsets.txt").read_text().lstrip("\n").splitlines()[0] + "\n")
    assert cli("import", str(header), *args) == 2
    err = capsys.readouterr().err
    assert (f"{header}: no queue, member, offset or holder row read (a header without rows, "
            "or nothing the importers read). Nothing was written: no earlier capture of "
            "snapshot s1 is replaced") in err
    assert len(DeltaTable(str(out / "offsets")).to_pandas()) == len(kept) > 0


def test_a_capture_waiting_for_another_says_so(tmp_path, capsys, monkeypatch):
    """A capture behind another one's `_capture.lock` waited up to 5 minutes without a
    word (an audit reading the folder says it waits)."""
    import capture.tables as tables
    from storage import locks

    monkeypatch.setattr(tables, "LOCK_WAIT_SECONDS", 0.3)
    out = tmp_path / "in"
    out.mkdir()
    args = ["--output", str(out), "--cluster", "prod", "--snapshot", "s1"]
    with locks.exclusive(out / tables.CAPTURE_LOCK):
        assert cli("import", str(DATA / "kcg_offsets.txt"), *args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"another capture is writing {out}: waiting for it to end (at "
                          "most 0.005 minutes)\n")
    assert "stayed locked" in err and "nothing was written" in err
    assert cli("import", str(DATA / "kcg_offsets.txt"), *args) == 0
    assert "waiting" not in capsys.readouterr().err


def test_a_kafka_format_forced_on_a_file_of_another_layout_is_refused(tmp_path, capsys):
    """`--format kafka-members` on an offsets output imported it as offsets (each header
    says its layout) without a word, though --format forces one for every file."""
    args = ["--output", str(tmp_path / "in"), "--cluster", "prod"]
    offsets = DATA / "kcg_offsets.txt"
    assert cli("import", str(offsets), *args, "--format", "kafka-members") == 2
    err = capsys.readouterr().err
    assert (f"{offsets} line 2: --format kafka-members, but the header is "
            "kafka-consumer-groups.sh's offsets layout: give --format kafka-offsets, or leave "
            "--format out (each header says its layout)") in err
    assert not (tmp_path / "in" / "offsets").exists()
    assert cli("import", str(offsets), *args, "--format", "kafka-offsets") == 0


@pytest.mark.parametrize("under", ["", "sub"])
def test_an_output_that_is_or_lies_under_a_file_is_a_usage_error(tmp_path, capsys, under):
    """It said "[Errno 17] File exists" after reading the files."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = afile / under if under else afile
    with pytest.raises(SystemExit) as exit_:
        cli("import", str(DATA / "kcg_offsets.txt"), "--cluster", "c", "--output", str(out))
    assert exit_.value.code == 2
    assert (f"argument --output: '{out}': {afile} is a file, not a folder; point --output at "
            "a folder") in capsys.readouterr().err


def test_blank_bootstrap_servers_are_a_usage_error(tmp_path, capsys):
    """An unset variable: librdkafka said "cannot reach : _TRANSPORT"."""
    with pytest.raises(SystemExit) as exit_:
        cli("kafka", "--bootstrap-servers", "", "--output", str(tmp_path / "o"))
    assert exit_.value.code == 2
    assert "argument --bootstrap-servers: must not be blank" in capsys.readouterr().err
