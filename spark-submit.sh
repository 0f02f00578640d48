#!/usr/bin/env bash
# rebalance-audit launcher: the same command on a laptop and on a cluster.
#
#   ./spark-submit.sh [spark options] audit [audit options]
#
# spark-submit's own options (--master, --conf, --deploy-mode, resources, --packages, ...)
# may stand anywhere and are passed to spark-submit; everything else goes to the job.
# --with-delta-package adds Delta's Maven package and SQL extensions (needs a reachable
# Maven repository; without it the offline Delta engine is used, see README).
# With no Python environment that has the project, it creates .venv and installs it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${REBALANCE_AUDIT_VENV:-$ROOT/.venv}"
# the job's usage lines and errors name this command (jobs.cli.program_name)
export REBALANCE_AUDIT_PROG="${REBALANCE_AUDIT_PROG:-spark-submit.sh}"

usage() {
  cat <<'EOF'
usage: ./spark-submit.sh [spark-submit options] audit [audit options]
       ./spark-submit.sh report --output DIR [--snapshot ID] [--group G] [--html PATH]
                               [--top N]
                               (report.html from an audit's output; no Spark, no JVM)
       ./spark-submit.sh capture kafka --bootstrap-servers HOST:PORT --output DIR ...
       ./spark-submit.sh capture import FILE... --output DIR --cluster NAME ...
                               (the input tables from a live Kafka cluster or from
                               admin-tool output; no Spark, no JVM; see docs/capture.md)

Audit options (./spark-submit.sh audit --help for details):
  --config YAML        settings file (conf/local.yaml, conf/cluster.yaml)
  --queues PATH        Delta table of queues       } none of them: audit the embedded
  --members PATH       Delta table of members      } demo cluster
  --offsets PATH       Delta table of offsets (optional)
  --observed PATH      Delta table of who really holds each queue (optional: drift)
  --output DIR         output root (one Delta table per report)
  --snapshot ID        audit only this snapshot (repeatable)
  --engine auto|native|offline   how Delta tables are read and written

Passed to spark-submit (anywhere on the line):
  --master URL  --deploy-mode MODE  --conf K=V  --driver-memory M  --executor-memory M
  --executor-cores N  --num-executors N  --total-executor-cores N  --queue Q  --name N
  --packages P  --jars J  --py-files F  --files F  --archives A  --repositories R
  --properties-file F  --driver-java-options O  --principal P  --keytab K  --verbose
  --with-delta-package   add io.delta:delta-spark and its SQL extensions (Maven needed)

Default master: local[*] with --driver-memory 1g per core, or more for inputs whose
largest file asks for it, 2g-4g (REBALANCE_AUDIT_DRIVER_MEMORY), committed at start for a
run of 1M input rows or more.
Exit code: 0 success, 2 bad input or config, 1 failure.
EOF
}

python_has_project() {
  "$1" - <<'EOF' >/dev/null 2>&1
import importlib.util, sys
mods = ("pyspark", "deltalake", "pandas", "pyarrow", "yaml", "jobs.cli")
sys.exit(0 if all(importlib.util.find_spec(m) for m in mods) else 1)
EOF
}

# 1. A Python that has the project: the active one, else .venv (created on first use).
PY=""
for candidate in "${REBALANCE_AUDIT_PYTHON:-}" "${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}" "$VENV/bin/python"; do
  if [[ -n "$candidate" && -x "$candidate" ]] && (cd "$ROOT" && python_has_project "$candidate"); then
    PY="$candidate"; break
  fi
done
if [[ -z "$PY" ]]; then
  echo "rebalance-audit: installing the project into $VENV (first run, about a minute)..." >&2
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet -e "$ROOT" >&2
  PY="$VENV/bin/python"
fi

# capture (live Kafka / admin-tool imports) and report (report.html from Delta outputs,
# read with delta-rs) need no Spark: run them without a JVM, through the command line that
# turns a user mistake into exit 2 and a message.
if [[ "${1:-}" == "capture" || "${1:-}" == "report" ]]; then
  PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" exec "$PY" -m jobs.cli "$@"
fi

# 2. Split the arguments: spark-submit options vs the job's.
spark_args=()
job_args=()
master=""
with_delta=0
takes_value=" --master --deploy-mode --conf -c --driver-memory --driver-cores --executor-memory \
--executor-cores --num-executors --total-executor-cores --queue --name --packages --jars \
--py-files --files --archives --repositories --properties-file --driver-java-options \
--driver-class-path --driver-library-path --principal --keytab --exclude-packages "
# spark-submit's --conf and --queue read like the job's --config and --queues shortened:
# a value only the job's flag takes is that mistake, said here (spark-submit printed its
# 95-line usage; --queue took a table's path as a YARN queue, the run then said --queues
# was missing)
spark_option_for_the_job() {  # OPTION VALUE
  if [[ "$1" == --conf && "$2" != *=* ]]; then
    echo "rebalance-audit: --conf is spark-submit's KEY=VALUE, not '$2': the audit's" \
      "settings file is --config" >&2
    exit 2
  fi
  if [[ "$1" == --queue && "$2" == */* ]]; then
    echo "rebalance-audit: --queue is spark-submit's YARN queue, and '$2' is a path:" \
      "the queues table is --queues" >&2
    exit 2
  fi
  return 0
}
while [[ $# -gt 0 ]]; do
  arg="$1"
  case "$arg" in
    -h|--help)
      if [[ ${#job_args[@]} -eq 0 ]]; then usage; exit 0; fi
      job_args+=("$arg"); shift ;;
    --with-delta-package) with_delta=1; shift ;;
    --verbose|--supervise) spark_args+=("$arg"); shift ;;
    --*=*)
      key="${arg%%=*}"
      if [[ "$takes_value" == *" $key "* ]]; then
        spark_option_for_the_job "$key" "${arg#*=}"
        spark_args+=("$key" "${arg#*=}"); [[ "$key" == --master ]] && master="${arg#*=}"
      else job_args+=("$arg"); fi
      shift ;;
    *)
      if [[ "$takes_value" == *" $arg "* ]]; then
        [[ $# -ge 2 ]] || { echo "rebalance-audit: $arg needs a value" >&2; exit 2; }
        spark_option_for_the_job "$arg" "$2"
        spark_args+=("$arg" "$2"); [[ "$arg" == --master ]] && master="$2"; shift 2
      else
        job_args+=("$arg"); shift
      fi ;;
  esac
done
if [[ ${#job_args[@]} -eq 0 ]]; then usage >&2; exit 2; fi
# capture, report and any job's --help need no Spark, whatever spark-submit options came
# first (`--master yarn report ...` started spark-submit, whose YARN client failed in Java)
job_help=0
for arg in "${job_args[@]:1}"; do [[ "$arg" == -h || "$arg" == --help ]] && job_help=1; done
if [[ "${job_args[0]}" == capture || "${job_args[0]}" == report || $job_help -eq 1 ]]; then
  if [[ ${#spark_args[@]} -gt 0 || $with_delta -eq 1 ]]; then
    what="${job_args[0]}"; [[ $job_help -eq 1 ]] && what="$what --help"
    echo "rebalance-audit: $what starts no Spark: the spark-submit options are not used" >&2
  fi
  PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" exec "$PY" -m jobs.cli "${job_args[@]}"
fi
if [[ -z "$master" ]]; then master="local[*]"; spark_args+=(--master "$master"); fi
# YARN's client finds the cluster through HADOOP_CONF_DIR or YARN_CONF_DIR (or what a
# spark-env.sh sets): without them spark-submit failed in Java (exit 1, a stack trace)
spark_env="${SPARK_CONF_DIR:-${SPARK_HOME:-}/conf}/spark-env.sh"
if [[ "$master" == yarn* && -z "${HADOOP_CONF_DIR:-}" && -z "${YARN_CONF_DIR:-}" \
      && ! -r "$spark_env" ]]; then
  echo "rebalance-audit: --master $master needs the cluster's Hadoop configuration:" \
    "set HADOOP_CONF_DIR (or YARN_CONF_DIR) to the folder holding its yarn-site.xml" >&2
  exit 2
fi
# In local mode the driver is the only executor: Spark's 1g default heap dies near 10M
# assignment rows, so give it 1g per core that runs tasks, 2g-4g (jobs/sizing.py), unless
# the user chose a size, here or in the config file's spark.conf (step 5 learns that). A
# run that is not short commits that heap at start (jobs.launch), and inputs whose largest
# file asks for more get more (step 5: jobs.launch names it as spark.driver.memory).
# A setting in the user's properties file (--properties-file, else spark-defaults.conf)
# is the user's as much as a --conf: the launcher's --conf would replace it.
props_files=()
for ((i = 0; i + 1 < ${#spark_args[@]}; i++)); do
  [[ "${spark_args[i]}" == --properties-file ]] && props_files+=("${spark_args[i+1]}")
done
if [[ ${#props_files[@]} -eq 0 ]]; then
  conf_dir="${SPARK_CONF_DIR:-}"
  if [[ -z "$conf_dir" && -n "${SPARK_HOME:-}" && -x "$SPARK_HOME/bin/spark-submit" ]]; then
    conf_dir="$SPARK_HOME/conf"
  fi
  [[ -n "$conf_dir" && -r "$conf_dir/spark-defaults.conf" ]] \
    && props_files+=("$conf_dir/spark-defaults.conf")
fi
users_setting() {  # KEY: set by the command line's --conf or a properties file
  [[ " ${spark_args[*]} " == *" $1="* ]] && return 0
  local file
  for file in "${props_files[@]}"; do
    grep -Eq "^[[:space:]]*${1//./\\.}([[:space:]]|=|:)" "$file" 2>/dev/null && return 0
  done
  return 1
}
launcher_heap=()
choose_heap=0
if [[ "$master" == local* && " ${spark_args[*]} " != *" --driver-memory "* ]] \
    && ! users_setting spark.driver.memory; then
  choose_heap=1
  launcher_heap=(--launcher-heap "$master")
fi

# 3. Delta's jars from Maven, only when asked (they cannot be fetched offline).
if [[ $with_delta -eq 1 ]]; then
  delta_version="$("$PY" -c 'import importlib.metadata as m; print(m.version("delta-spark"))')"
  scala="$("$PY" -c 'import pyspark, glob, os, re; j=glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "scala-library-*.jar")); print(re.search(r"scala-library-(\d+\.\d+)", j[0]).group(1) if j else "2.13")')"
  spark_args+=(--packages "io.delta:delta-spark_${scala}:${delta_version}"
               --conf "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension"
               --conf "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog")
fi

# 4. The interpreter for driver and workers; our code shipped to executors.
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$PY}"
export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-$PY}"
if [[ "$master" == local* ]]; then
  export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
else
  mkdir -p "$ROOT/build"
  (cd "$ROOT" && "$PY" - <<'EOF'
import pathlib, zipfile
with zipfile.ZipFile("build/rebalance_audit.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for pkg in ("capture", "jobs", "rebalance_udfs", "reports", "storage", "vocabulary"):
        for f in pathlib.Path(pkg).rglob("*.py"):
            z.write(f)
EOF
  )
  spark_args+=(--py-files "$ROOT/build/rebalance_audit.zip")
fi

if [[ -n "${SPARK_HOME:-}" && -x "$SPARK_HOME/bin/spark-submit" ]]; then
  SUBMIT="$SPARK_HOME/bin/spark-submit"
else
  SUBMIT="$(dirname "$PY")/spark-submit"
  unset SPARK_HOME
fi
# 5. The driver JVM's options, unless the user brings their own (--driver-java-options or
# spark.driver.extraJavaOptions replace these): concise logs (Spark at WARN), and on a
# local master the JIT and heap sized from the inputs' rows (jobs/launch.py: C1 alone for
# a short run; else the launcher's heap committed at start, -Xms).
# --help, or flags, settings or an output root the run would reject (jobs/launch.py
# exits 3): the job prints the help or the message without a JVM. The question is asked
# from the caller's folder, where the job resolves relative paths.
# The lines after the options: the config file's settings that only a JVM not yet started
# takes (spark.driver.memory, extraJavaOptions, ...). The JVM starts before the job reads
# the config, so they go to spark-submit, before the command line's, which win. The
# config's driver options come merged with these (jobs.session.driver_java_options).
java_options="-Dlog4j2.configurationFile=file:$ROOT/conf/log4j2.properties"
config_conf=()
if [[ "$master" == local* ]]; then
  launch=0
  answer="$(PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m jobs.launch \
            "${launcher_heap[@]}" "${job_args[@]}" 2>/dev/null)" || launch=$?
  if [[ $launch -eq 3 ]]; then
    PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" exec "$PY" -m jobs.cli "${job_args[@]}"
  fi
  mapfile -t answer_lines <<< "$answer"
  jit="${answer_lines[0]:-}"
  for setting in "${answer_lines[@]:1}"; do
    [[ -n "$setting" ]] || continue
    config_conf+=(--conf "$setting")
    if [[ "$setting" == spark.driver.memory=* ]]; then choose_heap=0; fi
  done
  java_options="$java_options${jit:+ $jit}"
fi
if [[ $choose_heap -eq 1 ]]; then
  heap="$(cd "$ROOT" && "$PY" -m jobs.sizing "$master")"  # REBALANCE_AUDIT_DRIVER_MEMORY wins
  spark_args+=(--driver-memory "${heap:-4g}")
fi
log_conf=()
if [[ " ${spark_args[*]} " != *"log4j2.configurationFile"* ]] \
    && ! users_setting spark.driver.extraJavaOptions; then
  log_conf=(--conf "spark.driver.extraJavaOptions=$java_options")
fi
# The job's defaults (jobs/session.py SESSION_DEFAULTS) are the job's own: it applies each
# one the user's --conf or properties file leaves unset. The keys the command line's
# --conf sets beat the config file's spark.conf, as every flag does; spark-defaults.conf
# and a properties file do not (jobs.session.command_line_conf).
cli_conf=""
for ((i = 0; i + 1 < ${#spark_args[@]}; i++)); do
  if [[ "${spark_args[i]}" == --conf || "${spark_args[i]}" == -c ]]; then
    cli_conf+="${spark_args[i+1]%%=*}"$'\n'
  fi
done
export REBALANCE_AUDIT_COMMAND_LINE_CONF="$cli_conf"
# spark-submit runs the job as a child of its JVM, so a scheduler's SIGTERM (timeout, YARN,
# Kubernetes) reached the JVM alone: its shutdown stopped Spark under the job, with pages
# of Java stack traces and no word about the output. The launcher waits for the JVM
# instead and hands SIGTERM to the job, which stops as on Ctrl-C (jobs/interrupt.py: one
# line saying what the output holds, exit 130); to the JVM while no job runs yet (or where
# /proc cannot name it). A background command ignores Ctrl-C: the job takes it back
# (REBALANCE_AUDIT_LAUNCHED) and gets it from the terminal as before, and the JVM leaves
# it to the job; with no job here (the JVM starting, a cluster's driver elsewhere) Ctrl-C
# stops the JVM, as it did.
export REBALANCE_AUDIT_LAUNCHED=1
"$SUBMIT" --conf spark.ui.showConsoleProgress=true "${log_conf[@]}" "${config_conf[@]}" \
  "${spark_args[@]}" "$ROOT/jobs/cli.py" "${job_args[@]}" &
submit=$!
job_of_submit() {
  local proc stat ppid
  for proc in /proc/[0-9]*; do
    stat="$(cat "$proc/stat" 2>/dev/null)" || continue
    read -r _ ppid _ <<< "${stat##*) }"
    [[ "$ppid" == "$submit" ]] || continue
    if tr '\0' ' ' < "$proc/cmdline" 2>/dev/null | grep -q "jobs/cli.py"; then
      echo "${proc#/proc/}"
      return
    fi
  done
}
on_term() {
  local job
  job="$(job_of_submit || true)"
  kill -TERM "${job:-$submit}" 2>/dev/null || true
}
on_int() {  # the job has Ctrl-C from the terminal, unless it has not taken it back yet
  local job ignored
  job="$(job_of_submit || true)"
  ignored="$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$job/status" 2>/dev/null || true)"
  if [[ -z "$job" ]]; then
    kill -TERM "$submit" 2>/dev/null || true
  elif [[ -n "$ignored" ]] && (( 0x$ignored & 2 )); then  # bit 2: SIGINT
    kill -TERM "$job" 2>/dev/null || true
  fi
}
trap on_term TERM
trap on_int INT
while kill -0 "$submit" 2>/dev/null; do wait "$submit" || true; done
status=0
wait "$submit" || status=$?
exit "$status"
