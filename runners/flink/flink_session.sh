#!/usr/bin/env bash
# A Flink session cluster for thmforge, from PyPI's Flink wheels (no separate Flink download).
#
#   runners/flink/flink_session.sh start     # Flink 2.2 cluster on :8081 + Beam SDK worker pool on :50000
#   runners/flink/flink_session.sh jobserver # fetch Beam's Flink job-server jar (Maven Central)
#   .venv/bin/thmforge build-corpus --preset flink --flink_job_server_jar "$(runners/flink/flink_session.sh jar)" ...
#   runners/flink/flink_session.sh stop
#
# Why each piece: apache-flink-libraries ships a runnable Flink distribution (bin/start-cluster.sh,
# lib/flink-dist); Beam's FlinkRunner translates the pipeline in its Flink job server (a Java jar
# that Beam otherwise downloads from Maven Central at submit time); Python DoFns run in SDK workers
# that the task managers reach through an EXTERNAL worker pool (--environment_config=localhost:50000).
# On a real cluster run one worker pool beside every task manager.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
STATE="${THMFORGE_FLINK_HOME:-$REPO/.flink}"
FLINK_VERSION="${FLINK_VERSION:-2.2.1}"     # Beam 2.77 publishes job servers for Flink 1.19, 1.20, 2.0, 2.1, 2.2
FLINK_MINOR="${FLINK_VERSION%.*}"
BEAM_VERSION="$("$REPO/.venv/bin/python" -c 'import apache_beam; print(apache_beam.__version__)')"
JAR="$STATE/beam-runners-flink-${FLINK_MINOR}-job-server-${BEAM_VERSION}.jar"
JAR_URL="https://repo.maven.apache.org/maven2/org/apache/beam/beam-runners-flink-${FLINK_MINOR}-job-server/${BEAM_VERSION}/beam-runners-flink-${FLINK_MINOR}-job-server-${BEAM_VERSION}.jar"
POOL_PORT="${THMFORGE_WORKER_POOL_PORT:-50000}"
export FLINK_HOME="$STATE/site/pyflink"

install_flink() {
  if [[ ! -x "$FLINK_HOME/bin/start-cluster.sh" ]]; then
    echo "installing Flink ${FLINK_VERSION} from PyPI into $STATE/site" >&2
    "$REPO/.venv/bin/python" -m pip install -q --no-deps --target "$STATE/site" \
      "apache-flink==${FLINK_VERSION}" "apache-flink-libraries==${FLINK_VERSION}"
    chmod +x "$FLINK_HOME"/bin/*
  fi
  command -v java >/dev/null || { echo "error: Flink needs Java 17 (java not on PATH)" >&2; exit 1; }
}

start() {
  install_flink
  "$FLINK_HOME/bin/start-cluster.sh"
  PATH="$REPO/.venv/bin:$PATH" nohup "$REPO/.venv/bin/python" -m apache_beam.runners.worker.worker_pool_main \
    --service_port="$POOL_PORT" >"$STATE/worker-pool.log" 2>&1 &
  echo $! >"$STATE/worker-pool.pid"
  for _ in $(seq 60); do
    curl -sf localhost:8081/overview >/dev/null && { echo "Flink UI: http://localhost:8081, worker pool: localhost:$POOL_PORT"; return; }
    sleep 1
  done
  echo "error: Flink REST endpoint did not come up on :8081 (see $FLINK_HOME/log)" >&2; exit 1
}

jobserver() {
  mkdir -p "$STATE"
  if [[ -s "$JAR" ]]; then echo "$JAR"; return; fi
  if ! curl -sfL --connect-timeout 10 -o "$JAR.part" "$JAR_URL"; then
    rm -f "$JAR.part"
    cat >&2 <<MSG
error: could not fetch Beam's Flink job server from Maven Central:
  $JAR_URL
FlinkRunner needs this jar. Download it on a machine with access and place it at
  $JAR
(or pass --flink_job_server_jar=PATH), then run this again.
MSG
    exit 3
  fi
  mv "$JAR.part" "$JAR"; echo "$JAR"
}

stop() {
  [[ -f "$STATE/worker-pool.pid" ]] && kill "$(cat "$STATE/worker-pool.pid")" 2>/dev/null || true
  rm -f "$STATE/worker-pool.pid"
  [[ -x "$FLINK_HOME/bin/stop-cluster.sh" ]] && "$FLINK_HOME/bin/stop-cluster.sh" || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  jobserver) jobserver ;;
  jar) [[ -s "$JAR" ]] && echo "$JAR" || { echo "error: no job-server jar yet; run: $0 jobserver" >&2; exit 3; } ;;
  *) echo "usage: $0 start|stop|jobserver|jar" >&2; exit 2 ;;
esac
