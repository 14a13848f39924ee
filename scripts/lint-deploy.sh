#!/usr/bin/env bash
# Lints deploy/ (make lint runs it; scripts/deps.sh installs its tools):
#   - the Helm chart: helm lint --strict, then helm template with the default
#     values and with each deploy/helm/sluice-upf/ci/*-values.yaml; every
#     Kubernetes object checked against Kubernetes' own schemas, the
#     Multus and ServiceMonitor objects and the references between objects
#     by hand (Helm is helm-python-sdk's, a wheel with Helm's Go SDK inside:
#     building the helm command from the Go proxy takes minutes);
#   - upfd.yaml, as each render of the chart and deploy/systemd/upfd.yaml
#     give it: `upfd check` in a throwaway network namespace shaped like the
#     pod (or the host) it is for: its devices, addresses and forwarding;
#   - the systemd unit: systemd-analyze verify, where systemd is installed;
#   - the Dockerfile: hadolint;
#   - the Grafana dashboards in deploy/grafana: valid JSON.
# In CI (CI set) a tool scripts/deps.sh installs (in .venv) must be there; elsewhere a
# missing one is skipped with a note. The namespaces need root: without it
# the upfd checks are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH=$PWD/.venv/bin:$PATH # the Python tools scripts/deps.sh installs there

chart=deploy/helm/sluice-upf
failed=0
fail() { echo "lint-deploy: $*" >&2; failed=1; }
# missing TOOL WHY: fails in CI, skips elsewhere.
missing() {
	if [[ -n ${CI:-} ]]; then
		fail "$1 is missing ($2); scripts/deps.sh installs it"
	else
		echo "lint-deploy: skipping $2: $1 is missing (scripts/deps.sh installs it)"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Grafana dashboards: JSON that parses.
shopt -s nullglob
for f in deploy/grafana/*.json; do
	python3 -m json.tool "$f" >/dev/null || fail "$f: not valid JSON"
done
shopt -u nullglob

# Dockerfile.
if command -v hadolint >/dev/null; then
	hadolint deploy/docker/Dockerfile || fail "deploy/docker/Dockerfile: hadolint (above)"
else
	missing hadolint "the Dockerfile lint"
fi

# upfd, for systemd-analyze (ExecStart must exist) and upfd check.
go build -o "$tmp/upfd" ./cmd/upfd

# systemd unit. Its ExecStart points at /usr/local/bin/upfd: verify a copy
# that points at the one just built. Warnings (unknown keys) fail too.
if command -v systemd-analyze >/dev/null; then
	sed "s|/usr/local/bin/upfd|$tmp/upfd|g" deploy/systemd/upfd.service >"$tmp/upfd.service"
	if ! out=$(systemd-analyze verify "$tmp/upfd.service" 2>&1) || [[ -n $out ]]; then
		fail "deploy/systemd/upfd.service: systemd-analyze verify: ${out//$tmp\//}"
	fi
else
	echo "lint-deploy: skipping the systemd unit: systemd-analyze is not installed (apt-get install systemd)"
fi

# The chart and the configurations.
if python3 -c 'import helm_python, kubernetes_validate, yaml' 2>/dev/null; then
	root=""
	[[ $(id -u) == 0 ]] || root="no"
	UPFD="$tmp/upfd" CHART="$chart" NOT_ROOT="$root" python3 - <<'PY' || failed=1
import glob, ipaddress, json, logging, os, subprocess, sys, tempfile

import helm_python as helm
import kubernetes_validate as kv
import yaml

CHART, UPFD = os.environ["CHART"], os.environ["UPFD"]
KUBE_VERSIONS = ["1.28.0", kv.latest_version()]  # the oldest the chart is for, and the newest
POD_IP = "198.18.100.2/24"   # the pod network's address, in the namespace
LAB = ipaddress.ip_network("198.18.0.0/15")  # the only addresses a namespace here may hold
problems = []
helm.enable_logging(logging.ERROR)  # Helm's engine logs each template fail at INFO


def problem(where, msg):
    if f"{where}: {msg}" not in problems:
        problems.append(f"{where}: {msg}")


def render(name, values):
    """helm lint --strict and helm template; returns the objects by kind/name."""
    lint = helm.lint(CHART, values, strict=True, namespace="core")
    for m in lint.get("messages", []):
        if m.get("severity", 0) > 1:  # above INFO (the icon)
            problem(name, f"helm lint: {m.get('path')}: {m.get('error').strip()}")
    with helm.Chart.load(CHART) as c:
        files = c.render(values, name="upf", namespace="core", is_install=True)
    objs = {}
    for path, text in sorted(files.items()):
        if path.endswith("NOTES.txt"):
            if not text.strip():
                problem(name, "NOTES.txt renders empty")
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                objs[(doc["kind"], doc["metadata"]["name"])] = doc
    return objs


def check_schemas(name, objs):
    for (kind, obj_name), obj in objs.items():
        for version in KUBE_VERSIONS:
            try:
                kv.validate(obj, version, strict=True)
            except kv.SchemaNotFoundError:
                if kind not in ("NetworkAttachmentDefinition", "ServiceMonitor"):
                    problem(name, f"{kind} {obj_name}: no Kubernetes {version} schema for {obj['apiVersion']}")
                break
            except kv.ValidationError as e:
                path = ".".join(str(p) for p in e.path)
                problem(name, f"{kind} {obj_name}: not valid for Kubernetes {version} at {path}: {e.message}")


def workload(objs):
    return next(o for (k, _), o in objs.items() if k in ("Deployment", "DaemonSet"))


def check_references(name, objs):
    """Services select the pod and name its ports; the attachments exist and
    chain tuning; the ServiceMonitor selects the metrics Service."""
    w = workload(objs)
    pod = w["spec"]["template"]
    labels = pod["metadata"]["labels"]
    container = pod["spec"]["containers"][0]
    ports = {p["name"]: p for p in container["ports"]}
    if not set(w["spec"]["selector"]["matchLabels"].items()) <= set(labels.items()):
        problem(name, "the workload's selector does not match its pod's labels")
    services = {n: o for (k, n), o in objs.items() if k == "Service"}
    for svc_name, svc in services.items():
        if not set(svc["spec"]["selector"].items()) <= set(labels.items()):
            problem(name, f"Service {svc_name} selects no pod of the workload")
        for p in svc["spec"]["ports"]:
            if p["targetPort"] not in ports or ports[p["targetPort"]]["protocol"] != p.get("protocol", "TCP"):
                problem(name, f"Service {svc_name}: port {p['name']} targets {p['targetPort']}, not a {p.get('protocol', 'TCP')} port of upfd")
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        port = container.get(probe, {}).get("httpGet", {}).get("port")
        if port is not None and port not in ports:
            problem(name, f"{probe} on port {port}, which upfd does not have")
    cm = objs.get(("ConfigMap", w["metadata"]["name"]))
    mounted = [v["configMap"]["name"] for v in pod["spec"]["volumes"] if "configMap" in v]
    if cm is None or cm["metadata"]["name"] not in mounted:
        problem(name, "the ConfigMap with upfd.yaml is not the one mounted")
    nads = {n: o for (k, n), o in objs.items() if k == "NetworkAttachmentDefinition"}
    for nad_name, nad in nads.items():
        try:
            cfg = json.loads(nad["spec"]["config"])
        except ValueError as e:
            problem(name, f"NetworkAttachmentDefinition {nad_name}: config is not JSON: {e}")
            continue
        if cfg.get("name") != nad_name or not cfg.get("cniVersion") or not all("type" in p for p in cfg.get("plugins", [])):
            problem(name, f"NetworkAttachmentDefinition {nad_name}: config wants a name (its own), a cniVersion and plugins with a type")
    for sel in json.loads(pod["metadata"].get("annotations", {}).get("k8s.v1.cni.cncf.io/networks", "[]")):
        if nads and sel["name"] not in nads:
            problem(name, f"the pod asks for attachment {sel['name']}, which the chart does not create")
    for (kind, sm_name), sm in objs.items():
        if kind != "ServiceMonitor":
            continue
        match = sm["spec"]["selector"]["matchLabels"]
        hits = [s for s in services.values() if set(match.items()) <= set(s["metadata"]["labels"].items())]
        if not hits or not all(any(p["name"] == e["port"] for p in s["spec"]["ports"]) for s in hits for e in sm["spec"]["endpoints"]):
            problem(name, f"ServiceMonitor {sm_name} selects no Service with its endpoints' ports")


def pod_shape(name, objs, values):
    """The pod upfd sees: its devices (from the attachments, or the host's
    for hostNetwork), the variables the container gets, upfd.yaml."""
    w = workload(objs)
    pod = w["spec"]["template"]
    env = {}
    for e in pod["spec"]["containers"][0]["env"]:
        if e["name"] == "POD_IP":
            env["POD_IP"] = POD_IP.split("/")[0]
        elif "value" in e:
            env[e["name"]] = e["value"].replace("$(POD_IP)", env["POD_IP"])
        elif "secretKeyRef" in e.get("valueFrom", {}):
            env[e["name"]] = "lint-token"
    devices = [{"name": "eth0", "addresses": [POD_IP], "sysctls": []}]
    selections = json.loads(pod["metadata"].get("annotations", {}).get("k8s.v1.cni.cncf.io/networks", "[]"))
    nads = {n: json.loads(o["spec"]["config"]) for (k, n), o in objs.items() if k == "NetworkAttachmentDefinition"}
    if selections:
        for sel in selections:
            plugins = nads[sel["name"]]["plugins"]
            ipam = plugins[0].get("ipam", {})
            sysctls = [k.replace("IFNAME", sel["interface"]) for p in plugins if p["type"] == "tuning" for k in p.get("sysctl", {})]
            devices.append({"name": sel["interface"], "addresses": [a["address"] for a in ipam.get("addresses", [])], "sysctls": sysctls})
    else:  # the host's devices, its admin having turned forwarding on
        for role, net in values.get("networks", {}).items():
            if isinstance(net, dict) and (role in ("n3", "n6") or net.get("enabled")):
                devices.append({"name": net["interface"], "addresses": [net["address"]] if net.get("address") else [],
                                "sysctls": [f"net.{v}.conf.{net['interface']}.forwarding" for v in ("ipv4", "ipv6")]})
    config = objs[("ConfigMap", w["metadata"]["name"])]["data"]["upfd.yaml"]
    init = [(c["name"], c["command"]) for c in pod["spec"].get("initContainers", [])]
    return {"name": name, "config": config, "env": env, "devices": devices, "container": True, "init": init}


def host_shape(path):
    """The host deploy/systemd/upfd.yaml is for: its interfaces, and a
    management device with the addresses it listens on."""
    cfg = yaml.safe_load(open(path))
    devices = [{"name": i["name"], "addresses": [f"{i['address']}/24"] if i.get("address") else [],
                "sysctls": []} for i in cfg["interfaces"]]  # upfd turns forwarding on itself
    listens = {cfg[k]["listen"].rsplit(":", 1)[0] for k in ("pfcp", "api", "metrics") if cfg.get(k, {}).get("listen")}
    mgmt = sorted(f"{a}/24" for a in listens if not ipaddress.ip_address(a).is_loopback)
    devices.append({"name": "mgmt0", "addresses": mgmt, "sysctls": []})
    return {"name": path, "config": open(path).read(), "env": {}, "devices": devices, "container": False, "init": []}


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def upfd_check(shape, index):
    """upfd check with shape's config, variables and devices, in a network
    namespace made for it (and removed)."""
    for d in shape["devices"]:
        for a in d["addresses"]:
            if ipaddress.ip_interface(a).ip not in LAB:
                problem(shape["name"], f"{a}: lint namespaces take addresses in {LAB} only; use one there in this file")
                return
    ns = f"sluicelint-{os.getpid()}-{index}"
    ip("netns", "add", ns)
    try:
        # Forwarding off to start with, as on a node that does not forward:
        # what turns it on for upfd's devices must be in the shape.
        off = [f"net.{v}.conf.{c}.forwarding=0" for v in ("ipv4", "ipv6") for c in ("all", "default")]
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", *off], check=True)
        for i, d in enumerate(shape["devices"]):
            ip("-n", ns, "link", "add", d["name"], "type", "veth", "peer", "name", f"lintp{i}")
            for a in d["addresses"]:
                ip("-n", ns, "addr", "add", a, "dev", d["name"])
            ip("-n", ns, "link", "set", d["name"], "up")
            ip("-n", ns, "link", "set", f"lintp{i}", "up")
        ip("-n", ns, "link", "set", "lo", "up")
        for d in shape["devices"]:
            for s in d["sysctls"]:
                subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"{s}=1"], check=True)
        for container, command in shape["init"]:  # ueRoutes' script, with iproute2's ip
            r = subprocess.run(["ip", "netns", "exec", ns, *command], capture_output=True, text=True)
            if r.returncode != 0:
                problem(shape["name"], f"init container {container}: {r.stderr.strip()}")
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(shape["config"])
            f.flush()
            env = {k: v for k, v in os.environ.items() if not k.startswith("UPFD_")}
            env.update(shape["env"])
            check = [UPFD, "check", "--config", f.name]
            if shape["container"]:  # /proc/sys is read-only in a container
                check = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                         'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$@"', "sh", *check]
            # nsenter, not ip netns exec: that remounts /sys, hiding the bpffs.
            r = subprocess.run(["nsenter", f"--net=/run/netns/{ns}", *check],
                               env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            problem(shape["name"], "upfd check: " + (r.stderr or r.stdout).strip().replace(f.name, "upfd.yaml"))
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


cases = [("default values", {})]
for path in sorted(glob.glob(os.path.join(CHART, "ci", "*-values.yaml"))):
    cases.append((path, yaml.safe_load(open(path)) or {}))
shapes = []
for name, values in cases:
    try:
        objs = render(name, values)
    except Exception as e:  # a template's fail, a YAML error
        problem(name, f"helm template: {e}")
        continue
    check_schemas(name, objs)
    check_references(name, objs)
    shapes.append(pod_shape(name, objs, values))
shapes.append(host_shape("deploy/systemd/upfd.yaml"))

if os.environ.get("NOT_ROOT"):
    print("lint-deploy: skipping upfd check of the configurations: network namespaces need root")
else:
    for i, shape in enumerate(shapes):
        upfd_check(shape, i)

for p in problems:
    print("lint-deploy:", p, file=sys.stderr)
print(f"lint-deploy: chart rendered {len(cases)} ways, {len(shapes)} configurations checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
else
	missing "helm-python-sdk or kubernetes-validate" "the chart and configuration checks"
fi

exit $failed
