# SPDX-License-Identifier: Apache-2.0
"""Prometheus and node_exporter (Debian's packages) on loopback for the end-to-end monitoring tests:
node_exporter's textfile collector reads one folder, Prometheus scrapes it every second and evaluates
deploy/prometheus's rules with their durations shortened (`for: 5m` becomes 5 s, `[5m]` 5 s)."""
import json
import os
import re
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def put(path, text):
    """Writes `path` as the plugins do: a new file renamed over the old one."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".new", "w") as f:
        f.write(text)
    os.rename(path + ".new", path)


def missing_tools():
    """The Debian packages not installed, as a message; empty when both are."""
    missing = [t for t in ("prometheus", "prometheus-node-exporter") if shutil.which(t) is None]
    return "" if not missing else f"{', '.join(missing)} not found: install Debian's package (scripts/install-deps.sh does)"


class PromStack:
    def __init__(self, work, rules_path, textfiles):
        self.work = work
        rules = open(rules_path).read()
        rules = re.sub(r"for: (\d+)m", r"for: \1s", rules)
        rules = re.sub(r"\[(\d+)m\]", r"[\1s]", rules)
        put(f"{work}/rules.yml", rules)
        ne_port, self.port = free_port(), free_port()
        put(f"{work}/prometheus.yml", f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [{work}/rules.yml]
scrape_configs:
  - job_name: node
    honor_labels: true
    static_configs: [{{targets: ['127.0.0.1:{ne_port}']}}]
""")
        self.procs = [
            subprocess.Popen(
                ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{ne_port}",
                 "--collector.disable-defaults", "--collector.textfile",
                 f"--collector.textfile.directory={textfiles}"],
                stdout=subprocess.DEVNULL, stderr=open(f"{work}/node_exporter.log", "w")),
            subprocess.Popen(
                ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/tsdb",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=subprocess.DEVNULL, stderr=open(f"{work}/prometheus.log", "w")),
        ]

    def _get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
            return json.load(r)

    def alerts(self):
        """Prometheus's alerts (firing and pending); [] while it is not up yet."""
        try:
            return self._get("/api/v1/alerts")["data"]["alerts"]
        except OSError:
            return []

    def query(self, expr):
        return self._get("/api/v1/query?query=" + urllib.parse.quote(expr))["data"]["result"]

    def print_alerts(self, alerts):
        for a in alerts:
            print(f"  {a['state']:8} {json.dumps(a['labels'], sort_keys=True)}")
            if a["state"] == "firing":
                print(f"           summary: {a['annotations'].get('summary', '')}")
                print(f"           fix: {a['annotations'].get('fix', '')}")

    def print_logs(self):
        for log in ("node_exporter.log", "prometheus.log"):
            print(f"--- {log}\n" + open(f"{self.work}/{log}").read()[-2000:])

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
