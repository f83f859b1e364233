// SPDX-License-Identifier: Apache-2.0
// Validates rendered Kubernetes manifests (multi-document YAML files) offline:
//  - built-in kinds against the Kubernetes OpenAPI schemas (kubernetes-models' compiled validators),
//    plus a strict unknown-field check like kubeconform -strict / kubectl --validate=strict
//  - CRDs (NicClusterPolicy, NetworkAttachmentDefinition) and the JSON embedded in them (CNI config,
//    RDMA shared device plugin config) against the JSON schemas in ./schemas (ajv, draft 2020-12)
//  - cross-references: Multus networks, configMapRef/claimName/configMap volumes, device-plugin
//    resources named by the NADs, no untagged or `latest` images
// Usage: node validate_k8s.js TOOLS_DIR FILE.yaml...   Exit 1 with one line per problem.
'use strict';
const fs = require('fs');
const path = require('path');
const tools = process.argv[2];
const files = process.argv.slice(3);
const req = (m) => require(path.join(tools, 'node_modules', m));
const YAML = req('yaml');
const Ajv2020 = req('ajv/dist/2020').default;

const problems = [];
const bad = (where, msg) => problems.push(`${where}: ${msg}`);

// --- built-in kinds: kubernetes-models' validators, with every read recorded ------------------------
const SCHEMA_DIRS = [
  path.join(tools, 'node_modules', 'kubernetes-models', '_schemas'),
  path.join(tools, 'node_modules', '@kubernetes-models', 'apimachinery', '_schemas'),
];
function schemaModule(name) {
  for (const dir of SCHEMA_DIRS) {
    const file = path.join(dir, `${name}.js`);
    if (fs.existsSync(file)) return require(file);
  }
  return null;
}
function builtinSchemaName(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const g = group === '' ? 'Core' : group.split('.')[0].replace(/^./, (c) => c.toUpperCase());
  const v = version.replace(/^./, (c) => c.toUpperCase());
  return `IoK8sApi${g}${v}${kind}`;
}
// Wraps a value so that every property the validator looks at is recorded; a key that the schema's
// validator never read is not in the schema (maps are enumerated, so all their keys count as read).
function track(value, where, records) {
  if (value === null || typeof value !== 'object') return value;
  const rec = { where, keys: Array.isArray(value) ? [] : Object.keys(value), read: new Set(), enumerated: false };
  records.push(rec);
  const target = Array.isArray(value)
    ? value.map((x, i) => track(x, `${where}[${i}]`, records))
    : Object.fromEntries(Object.entries(value).map(([k, x]) => [k, track(x, `${where}.${k}`, records)]));
  return new Proxy(target, {
    get(t, k, r) { if (typeof k === 'string') rec.read.add(k); return Reflect.get(t, k, r); },
    has(t, k) { if (typeof k === 'string') rec.read.add(k); return Reflect.has(t, k); },
    ownKeys(t) { rec.enumerated = true; return Reflect.ownKeys(t); },
  });
}
// kubernetes-models compiles its validators without messages: word them from keyword and params.
function describe(e) {
  if (e.message) return e.message;
  const p = e.params || {};
  switch (e.keyword) {
    case 'type': return `must be ${p.type}`;
    case 'required': return `must have required property '${p.missingProperty}'`;
    case 'enum': return `must be one of ${JSON.stringify(p.allowedValues)}`;
    case 'format': return `must match format "${p.format}"`;
    case 'pattern': return `must match pattern "${p.pattern}"`;
    default: return `fails ${e.keyword} ${JSON.stringify(p)}`;
  }
}
function validateBuiltin(doc, where) {
  const name = builtinSchemaName(doc.apiVersion, doc.kind);
  const mod = schemaModule(name);
  if (!mod) return false;
  const records = [];
  const ok = mod.validate(track(doc, '', records));
  if (!ok) for (const e of mod.validate.errors) bad(where, `${e.instancePath || '/'} ${describe(e)} (${doc.kind} schema)`);
  for (const r of records) {
    if (r.enumerated) continue;
    for (const k of r.keys) if (!r.read.has(k)) bad(where, `unknown field ${r.where}.${k} (${doc.kind} schema)`);
  }
  return true;
}

// --- CRDs and embedded JSON --------------------------------------------------------------------------
const ajv = new Ajv2020({ allErrors: true, strict: false });
for (const f of fs.readdirSync(path.join(__dirname, 'schemas'))) {
  ajv.addSchema(JSON.parse(fs.readFileSync(path.join(__dirname, 'schemas', f), 'utf8')));
}
const objectMeta = schemaModule('IoK8sApimachineryPkgApisMetaV1ObjectMeta');
function check(schemaId, value, where) {
  const v = ajv.getSchema(schemaId);
  if (!v(value)) for (const e of v.errors) bad(where, `${e.instancePath || '/'} ${e.message} (${schemaId})`);
}
function parseEmbedded(text, where) {
  try { return JSON.parse(text); } catch (e) { bad(where, `embedded JSON does not parse: ${e.message}`); return null; }
}
const CRDS = {
  'k8s.cni.cncf.io/v1/NetworkAttachmentDefinition': (doc, where) => {
    check('network-attachment-definition', doc, where);
    const cfg = doc.spec && typeof doc.spec.config === 'string' ? parseEmbedded(doc.spec.config, `${where} spec.config`) : null;
    if (cfg) {
      check('cni-config', cfg, `${where} spec.config`);
      if (cfg.name !== doc.metadata.name) bad(where, `CNI config name "${cfg.name}" differs from metadata.name "${doc.metadata.name}"`);
    }
  },
  'mellanox.com/v1alpha1/NicClusterPolicy': (doc, where) => {
    check('nicclusterpolicy', doc, where);
    const dp = doc.spec && doc.spec.rdmaSharedDevicePlugin;
    if (dp && typeof dp.config === 'string') {
      const cfg = parseEmbedded(dp.config, `${where} rdmaSharedDevicePlugin.config`);
      if (cfg) check('rdma-shared-device-plugin-config', cfg, `${where} rdmaSharedDevicePlugin.config`);
    }
  },
};

// --- read everything ---------------------------------------------------------------------------------
const docs = [];
for (const file of files) {
  const all = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'));
  all.forEach((d, i) => {
    if (d.errors.length) { bad(`${file}#${i}`, `YAML: ${d.errors[0].message}`); return; }
    const doc = d.toJSON();
    if (doc === null) return;
    docs.push({ doc, where: `${file}#${i} ${doc.kind || '?'}/${(doc.metadata || {}).name || '?'}` });
  });
}
for (const { doc, where } of docs) {
  if (!doc.apiVersion || !doc.kind) { bad(where, 'missing apiVersion or kind'); continue; }
  const crd = CRDS[`${doc.apiVersion}/${doc.kind}`];
  if (crd) {
    if (objectMeta && !objectMeta.validate(doc.metadata))
      for (const e of objectMeta.validate.errors) bad(where, `metadata${e.instancePath} ${describe(e)}`);
    crd(doc, where);
  } else if (!validateBuiltin(doc, where)) {
    bad(where, `no schema for ${doc.apiVersion} ${doc.kind}`);
  }
}

// --- cross-references --------------------------------------------------------------------------------
const byKind = (k) => docs.filter((d) => d.doc.kind === k).map((d) => d.doc);
const names = (k) => new Set(byKind(k).map((d) => d.metadata.name));
const nads = byKind('NetworkAttachmentDefinition');
// A container's environment: its envFrom ConfigMaps (in the render), then its own env values.
function containerEnv(c) {
  const env = {};
  for (const ef of c.envFrom || []) {
    const cm = ef.configMapRef && byKind('ConfigMap').find((m) => m.metadata.name === ef.configMapRef.name);
    if (cm) Object.assign(env, cm.data || {});
  }
  for (const e of c.env || []) if (typeof e.value === 'string') env[e.name] = e.value;
  return env;
}
// The IPAM ranges of a NAD's CNI config (top level or any plugin's ipam.range).
function ipamRanges(nad) {
  let cfg;
  try { cfg = JSON.parse(nad.spec.config); } catch (e) { return []; }
  return [cfg, ...(cfg.plugins || [])].map((p) => p.ipam && p.ipam.range).filter(Boolean);
}
// IPv4 CIDR `inner` lies inside `outer`.
function cidrWithin(inner, outer) {
  const parse = (c) => {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(c);
    if (!m) return null;
    return { ip: ((+m[1] << 24) >>> 0) + (+m[2] << 16) + (+m[3] << 8) + +m[4], bits: +m[5] };
  };
  const a = parse(inner), b = parse(outer);
  if (!a || !b || a.bits < b.bits) return false;
  const mask = b.bits === 0 ? 0 : (0xffffffff << (32 - b.bits)) >>> 0;
  return ((a.ip & mask) >>> 0) === ((b.ip & mask) >>> 0);
}
for (const { doc, where } of docs) {
  const tpl = doc.kind === 'Pod' ? doc : doc.spec && doc.spec.template;
  if (!tpl || !tpl.spec) continue;
  const ann = (tpl.metadata && tpl.metadata.annotations) || {};
  const resources = new Set();
  for (const c of [...(tpl.spec.containers || []), ...(tpl.spec.initContainers || [])]) {
    const r = c.resources || {};
    for (const k of Object.keys({ ...(r.limits || {}), ...(r.requests || {}) })) resources.add(k);
    const lim = (r.limits || {}), rq = (r.requests || {});
    for (const k of Object.keys(rq)) if (k.includes('/') && String(lim[k]) !== String(rq[k]))
      bad(where, `container ${c.name}: extended resource ${k} needs limits == requests`);
    if (!/^[^:@]+(:[^:/]+|@sha256:[0-9a-f]{64})$/.test(c.image.replace(/^[^/]+:[0-9]+\//, 'x/')) || /:latest$/.test(c.image))
      bad(where, `container ${c.name}: image "${c.image}" must carry an explicit tag other than latest`);
    for (const ef of c.envFrom || []) if (ef.configMapRef && !names('ConfigMap').has(ef.configMapRef.name))
      bad(where, `container ${c.name}: envFrom configMap "${ef.configMapRef.name}" is not in the render`);
  }
  for (const v of tpl.spec.volumes || []) {
    if (v.persistentVolumeClaim && !names('PersistentVolumeClaim').has(v.persistentVolumeClaim.claimName))
      bad(where, `volume ${v.name}: PVC "${v.persistentVolumeClaim.claimName}" is not in the render`);
    if (v.configMap && !names('ConfigMap').has(v.configMap.name))
      bad(where, `volume ${v.name}: configMap "${v.configMap.name}" is not in the render`);
  }
  const networks = ann['k8s.v1.cni.cncf.io/networks'];
  const rdmaNets = [];
  if (networks !== undefined) {
    let list;
    try {
      list = networks.trim().startsWith('[') ? JSON.parse(networks) : networks.split(',').map((n) => ({ name: n.trim() }));
    } catch (e) { bad(where, `k8s.v1.cni.cncf.io/networks is not valid JSON: ${e.message}`); continue; }
    for (const n of list) {
      const nad = nads.find((d) => d.metadata.name === n.name);
      if (!nad) { bad(where, `Multus network "${n.name}" has no NetworkAttachmentDefinition in the render`); continue; }
      const res = (nad.metadata.annotations || {})['k8s.v1.cni.cncf.io/resourceName'];
      if (res && !resources.has(res)) bad(where, `network "${n.name}" needs resource ${res}, which no container requests`);
      if (res) rdmaNets.push(nad);
    }
    // RDMA secondary networks: NCCL must be told which HCAs and which GIDs (issue #18). Without
    // NCCL_IB_ADDR_RANGE, GID selection on a shared HCA may pick the host's address; the range must
    // cover every attached network's IPAM range.
    if (rdmaNets.length) {
      for (const c of tpl.spec.containers || []) {
        const env = containerEnv(c);
        if (!env.NCCL_IB_HCA) bad(where, `container ${c.name}: attaches RDMA networks but sets no NCCL_IB_HCA`);
        const range = env.NCCL_IB_ADDR_RANGE;
        if (!range) { bad(where, `container ${c.name}: attaches RDMA networks but sets no NCCL_IB_ADDR_RANGE`); continue; }
        for (const nad of rdmaNets)
          for (const r of ipamRanges(nad))
            if (!cidrWithin(r, range))
              bad(where, `container ${c.name}: network "${nad.metadata.name}" range ${r} is outside NCCL_IB_ADDR_RANGE ${range}`);
      }
    }
  }
}

// A ReadWriteMany claim needs a class that offers it; the default class usually does not.
for (const pvc of byKind('PersistentVolumeClaim'))
  if ((pvc.spec.accessModes || []).includes('ReadWriteMany') && !pvc.spec.storageClassName)
    bad(`PersistentVolumeClaim/${pvc.metadata.name}`, 'ReadWriteMany without storageClassName (the default class is usually ReadWriteOnce: the claim would stay Pending)');

// A NIC driver upgrade reloads the modules under running jobs unless it waits for them.
for (const ncp of byKind('NicClusterPolicy')) {
  const up = ((ncp.spec || {}).ofedDriver || {}).upgradePolicy;
  if (!up || !up.autoUpgrade) continue;
  if (!(up.waitForCompletion && up.waitForCompletion.podSelector))
    bad(`NicClusterPolicy/${ncp.metadata.name}`, 'autoUpgrade without waitForCompletion.podSelector would reload the NIC driver under running jobs');
  if (up.drain && up.drain.force)
    bad(`NicClusterPolicy/${ncp.metadata.name}`, 'autoUpgrade with drain.force deletes pods no controller owns');
}

for (const p of problems) console.log(p);
console.log(`validate_k8s: ${docs.length} object(s), ${problems.length} problem(s)`);
process.exit(problems.length ? 1 : 0);
