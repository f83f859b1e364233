#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs `railscope doctor --json` every $INTERVAL_SECONDS and publishes the result three ways:
#   - stdout: the JSON report of each run, on one line (kubectl logs, log shipping)
#   - $TEXTFILE_DIR/railscope_doctor.prom: node-exporter textfile collector metrics
#   - $STATE_DIR/ready (default /tmp/railscope/ready): present while the status is at most $READY_MAX_STATUS (readiness probe)
# doctor's exit status: 0 healthy, 1 warnings, 2 errors.
set -u
INTERVAL_SECONDS=${INTERVAL_SECONDS:-300}
READY_MAX_STATUS=${READY_MAX_STATUS:-1}
TEXTFILE_DIR=${TEXTFILE_DIR:-/textfile}
NODE=${NODE_NAME:-unknown}
STATE_DIR=${STATE_DIR:-/tmp/railscope}
mkdir -p "$STATE_DIR"
while true; do
  railscope doctor --json > "$STATE_DIR/report.json" 2> "$STATE_DIR/stderr.txt"
  status=$?
  report=$(tr -d '\n' < "$STATE_DIR/report.json")
  [ -n "$report" ] || report=null
  printf '{"node":"%s","doctor_exit_status":%d,"report":%s}\n' "$NODE" "$status" "$report"
  [ -s "$STATE_DIR/stderr.txt" ] && sed 's/^/doctor stderr: /' "$STATE_DIR/stderr.txt"
  if [ -d "$TEXTFILE_DIR" ]; then
    tmp="$TEXTFILE_DIR/.railscope_doctor.prom.$$"
    {
      echo "# HELP railscope_doctor_status railscope doctor exit status (0 healthy, 1 warnings, 2 errors)."
      echo "# TYPE railscope_doctor_status gauge"
      echo "railscope_doctor_status{node=\"$NODE\"} $status"
      echo "# HELP railscope_doctor_last_run_timestamp_seconds When railscope doctor last ran."
      echo "# TYPE railscope_doctor_last_run_timestamp_seconds gauge"
      echo "railscope_doctor_last_run_timestamp_seconds{node=\"$NODE\"} $(date +%s)"
    } > "$tmp" && mv "$tmp" "$TEXTFILE_DIR/railscope_doctor.prom"
  fi
  if [ "$status" -le "$READY_MAX_STATUS" ]; then
    touch "$STATE_DIR/ready"
  else
    rm -f "$STATE_DIR/ready"
  fi
  sleep "$INTERVAL_SECONDS"
done
