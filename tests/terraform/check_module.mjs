#!/usr/bin/env node
// Checks a Terraform module against a provider's argument reference: by default the OpenStack one
// (../shared/reference/openstack-provider-arguments.json, provider v3.4.0; rules in its README.md), or
// with --reference tests/data/aws-provider-arguments.json the AWS one (provider v5.100.0, research in
// docs/research/aws-research.md). The provider block checked is the reference's ("provider": "hashicorp/aws"
// -> provider "aws").
//
//   node check_module.mjs [--reference FILE] [DIR_OR_FILE...]   default: src/targets/<provider>/terraform/
//       One line per problem, "file: resource TYPE.NAME: message", exit 1; else a summary, exit 0.
//   node check_module.mjs --expect-fail FILE.tf...
//       Each FILE is checked on its own and must fail with exactly the problems named by its
//       "# expect: TEXT" comments (each TEXT a substring of one problem line); exit 1 otherwise.
//
// Values come from @cdktf/hcl2json. HCL-to-JSON loses the difference between `x { ... }` and
// `x = [{ ... }]` (and drops one of the two when both are written), so a small structural scanner of
// the source decides how each key was written and how many blocks of a name there are.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanStructure } from './hcl_structure.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

let hcl2json;
try {
  hcl2json = await import('@cdktf/hcl2json');
} catch {
  console.error(`check_module: @cdktf/hcl2json is not installed; run: npm ci --prefix ${path.relative(process.cwd(), here) || '.'}`);
  process.exit(2);
}

// ---- reference -------------------------------------------------------------------------------

// Where each provider's credentials belong instead of the provider block.
const CREDENTIALS_FROM = {
  'terraform-provider-openstack/openstack': 'clouds.yaml or the environment',
  'hashicorp/aws': 'the environment or the shared credentials files',
};

// The next major version a reference describes changes for: the N of its removed_in_Nx... or
// arguments_removed_in_Nx keys (OpenStack: 3 from removed_in_3x; AWS: 6 from removed_in_6x_by_kind).
function nextMajor(ref) {
  for (const key of Object.keys(ref)) {
    const m = /^(?:arguments_)?removed_in_(\d+)x(?:_by_kind)?$/.exec(key);
    if (m) return m[1];
  }
  return null;
}

// A reference may have a supplement in tests/data/<name>-supplement.json: resources its all_resource_types
// lists but it does not cover, in its format (read from the provider's source at the same tag).
function loadReference(file) {
  const ref = JSON.parse(fs.readFileSync(file, 'utf8'));
  const supplement = path.join(repoRoot, 'tests', 'data', `${path.basename(file, '.json')}-supplement.json`);
  if (fs.existsSync(supplement)) {
    const extra = JSON.parse(fs.readFileSync(supplement, 'utf8'));
    if (extra.source_tag !== ref.source_tag) throw new Error(`${supplement} is for ${extra.source_tag}, the reference for ${ref.source_tag}`);
    Object.assign(ref.resources, extra.resources ?? {});
    Object.assign(ref.data_sources, extra.data_sources ?? {});
  }
  const major = nextMajor(ref);
  const removedList = ref[`removed_in_${major}x`];
  const removedByKind = ref[`removed_in_${major}x_by_kind`];
  const removed = new Set(removedList);
  for (const list of Object.values(removedByKind ?? {})) for (const t of list) removed.add(t);
  const computedOnlyNow = ref.arguments_settable_in_2_1_0_but_computed_only_in_3_4_0?.resources ?? {};
  // Arguments the next major version removed (a module must not use them) or added (a module that must
  // also work on this version cannot use them yet): {resources: {type: [arg]}, data_sources: ..., provider: [...]}.
  const argsRemoved = ref[`arguments_removed_in_${major}x`] ?? {};
  const argsAdded = ref[`arguments_added_in_${major}x`] ?? {};
  const addedEverywhere = argsAdded.all_regional_resources_and_data_sources ?? [];
  return {
    ref,
    name: ref.provider.split('/').pop(),
    major,
    credentialsFrom: CREDENTIALS_FROM[ref.provider] ?? 'the environment',
    removed,
    computedOnlyNow,
    providerRemoved: new Set(argsRemoved.provider ?? []),
    providerAdded: new Set(argsAdded.provider ?? []),
    kinds: {
      resource: {
        schemas: ref.resources, removed: new Set(removedByKind?.resources ?? removedList),
        all: new Set(ref.all_resource_types), meta: new Set(ref.meta_arguments.resource),
        argsRemoved: argsRemoved.resources ?? {}, argsAdded: argsAdded.resources ?? {}, addedEverywhere,
      },
      data: {
        schemas: ref.data_sources, removed: new Set(removedByKind?.data_sources ?? removedList),
        all: new Set(ref.all_data_source_types), meta: new Set(ref.meta_arguments.data_source),
        argsRemoved: argsRemoved.data_sources ?? {}, argsAdded: argsAdded.data_sources ?? {}, addedEverywhere,
      },
    },
  };
}

// ---- values ----------------------------------------------------------------------------------

const isExpression = (v) => typeof v === 'string' && (v.includes('${') || v.includes('%{'));
const isLiteral = (v) => typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && !isExpression(v));
const isBlockList = (v) => Array.isArray(v) && v.every((e) => e !== null && typeof e === 'object' && !Array.isArray(e));
const show = (v) => JSON.stringify(v);

function checkLiteral(spec, value, where, report) {
  const values = Array.isArray(value) ? value : [value];
  for (const v of values) {
    if (!isLiteral(v)) continue;
    if (spec.allowed_values) {
      const ic = spec.allowed_values_ignore_case;
      const norm = (x) => (ic ? String(x).toLowerCase() : String(x));
      let ok = spec.allowed_values.some((a) => norm(a) === norm(v));
      const range = spec.also_allows_integer_string_range;
      if (!ok && range && /^\d+$/.test(String(v))) ok = Number(v) >= range[0] && Number(v) <= range[1];
      if (!ok) report(`${where} = ${show(v)} is not one of ${spec.allowed_values.map(show).join(', ')}`);
    } else if (spec.documented_values && !spec.documented_values.includes(v)) {
      report(`${where} = ${show(v)} is not one of the documented values ${spec.documented_values.map(show).join(', ')}`);
    }
    const num = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : null;
    if (num !== null && spec.type === 'number') {
      if (spec.min_value !== undefined && num < spec.min_value) report(`${where} = ${show(v)} is below the minimum ${spec.min_value}`);
      if (spec.max_value !== undefined && num > spec.max_value) report(`${where} = ${show(v)} is above the maximum ${spec.max_value}`);
    }
    if (spec.max_length !== undefined && typeof v === 'string' && v.length > spec.max_length) {
      report(`${where} is ${v.length} characters long, more than the maximum ${spec.max_length}`);
    }
    if (spec.pattern && typeof v === 'string' && !new RegExp(spec.pattern).test(v)) {
      report(`${where} = ${show(v)} does not match ${spec.pattern}`);
    }
    if (spec.type === 'bool' && typeof v !== 'boolean' && v !== 'true' && v !== 'false') report(`${where} = ${show(v)} is not a bool`);
    if (spec.type === 'number' && num === null) report(`${where} = ${show(v)} is not a number`);
  }
}

// ---- blocks ----------------------------------------------------------------------------------

const DYNAMIC_KEYS = new Set(['for_each', 'iterator', 'labels', 'content']);
const LIFECYCLE_KEYS = new Set(['create_before_destroy', 'prevent_destroy', 'ignore_changes', 'replace_triggered_by', 'precondition', 'postcondition']);

// Checks one body (a resource/data block, or one nested block) against its schema.
//   json: the body as hcl2json gives it; src: the same body from scanStructure (may be null)
//   args: the schema's arguments; top: {kind, typeSchema, type} for a resource/data body, else null
//   versions: {removed, added, major, version} (argument paths such as "cpu_options.core_count" that the
//             next major version removed / added), or null
function checkBody(json, src, args, where, report, top, versions = null) {
  const present = new Set();
  const dynamics = json.dynamic && typeof json.dynamic === 'object' ? json.dynamic : {};
  const srcAttrs = new Map((src?.attrs ?? []).map((a) => [a.name, a]));
  const srcBlocks = src?.blocks ?? [];
  const prefix = where ? `${where}.` : '';

  // Rule 2: every key is settable, a meta-argument, or timeouts.
  for (const [key, value] of Object.entries(json)) {
    if (key === 'dynamic') continue;
    if (top && top.meta.has(key)) {
      if (key === 'lifecycle' && isBlockList(value)) {
        for (const lc of value) for (const k of Object.keys(lc)) if (!LIFECYCLE_KEYS.has(k)) report(`lifecycle: unknown argument "${k}"`);
      }
      continue;
    }
    if (top && key === 'timeouts') {
      const ops = top.typeSchema.timeouts ?? [];
      if (ops.length === 0) { report(`${top.type} has no timeouts block`); continue; }
      if (!isBlockList(value)) { report(`timeouts is a block; write "timeouts { ... }", not "timeouts = ..."`); continue; }
      for (const t of value) for (const op of Object.keys(t)) if (!ops.includes(op)) report(`timeouts: unknown operation "${op}" (allowed: ${ops.join(', ')})`);
      continue;
    }
    const spec = args[key];
    if (!spec) {
      const added = versions?.added.has(`${prefix}${key}`);
      report(`unknown argument "${prefix}${key}"${added ? ` (added in provider ${versions.major}.x; not in ${versions.version})` : ''}`);
      continue;
    }
    if (versions?.removed.has(`${prefix}${key}`)) {
      report(`"${prefix}${key}" was removed in provider ${versions.major}.0`);
      continue;
    }
    if (!spec.settable) {
      const was = top && top.kind === 'resource' && (top.computedOnlyNow[top.type] ?? []).includes(key);
      report(`"${prefix}${key}" is computed-only and cannot be set${was ? ' (settable in 2.x, computed-only in 3.x)' : ''}`);
      continue;
    }
    if (value === null) continue; // `x = null` is the same as leaving x out
    present.add(key);
    if (spec.deprecated === true) report(`"${prefix}${key}" is deprecated`);
    else if (spec.deprecated) report(`"${prefix}${key}" is deprecated: ${spec.deprecated}`);
    if (spec.type === 'block') {
      // Rule 5: blocks are written as blocks.
      if (!isBlockList(value) || srcAttrs.has(key)) {
        report(`"${prefix}${key}" is a block; write "${key} { ... }" (or a dynamic block), not "${key} = ..."`);
        continue;
      }
      value.forEach((b, idx) => {
        const srcBlock = srcBlocks.filter((s) => s.type === key)[idx] ?? null;
        checkBody(b, srcBlock?.body ?? null, spec.block ?? {}, `${prefix}${key}`, report, null, versions);
      });
    } else {
      if (srcBlocks.some((s) => s.type === key) || (isBlockList(value) && value.length > 0 && !srcAttrs.has(key) && src)) {
        report(`"${prefix}${key}" is an argument (${spec.type}), not a block; write "${key} = ..."`);
        continue;
      }
      checkLiteral(spec, value, `${prefix}${key}`, report); // rule 6
    }
  }
  // The source may hold an attribute hcl2json dropped in favour of a block of the same name.
  for (const a of src?.attrs ?? []) {
    const spec = args[a.name];
    if (spec?.type === 'block' && isBlockList(json[a.name]) && srcBlocks.some((s) => s.type === a.name)) {
      report(`"${prefix}${a.name}" is a block; write "${a.name} { ... }" (or a dynamic block), not "${a.name} = ..."`);
    }
  }

  // Dynamic blocks: only of block arguments; their content is checked like a static block.
  for (const [name, list] of Object.entries(dynamics)) {
    const spec = args[name];
    if (!spec) { report(`unknown argument "${prefix}${name}" (dynamic block)`); continue; }
    if (spec.type !== 'block') { report(`dynamic "${prefix}${name}": ${name} is an argument (${spec.type}), not a block`); continue; }
    if (!spec.settable) { report(`"${prefix}${name}" is computed-only and cannot be set (dynamic block)`); continue; }
    present.add(name);
    for (const d of Array.isArray(list) ? list : [list]) {
      for (const k of Object.keys(d)) if (!DYNAMIC_KEYS.has(k)) report(`dynamic "${prefix}${name}": unknown key "${k}"`);
      if (!('for_each' in d)) report(`dynamic "${prefix}${name}": missing for_each`);
      if (!isBlockList(d.content) || d.content.length !== 1) { report(`dynamic "${prefix}${name}": needs exactly one content block`); continue; }
      const srcDyn = srcBlocks.find((s) => s.type === 'dynamic' && s.labels[0] === name);
      const srcContent = srcDyn?.body.blocks.find((b) => b.type === 'content') ?? null;
      checkBody(d.content[0], srcContent?.body ?? null, spec.block ?? {}, `${prefix}${name}`, report, null, versions);
    }
  }

  // Rule 5: max_items, counting blocks as written in the source (dynamic ones count as one).
  for (const [key, spec] of Object.entries(args)) {
    if (spec.type !== 'block' || spec.max_items === undefined) continue;
    const written = src
      ? srcBlocks.filter((s) => s.type === key || (s.type === 'dynamic' && s.labels[0] === key)).length
      : (isBlockList(json[key]) ? json[key].length : 0) + (dynamics[key] ? [].concat(dynamics[key]).length : 0);
    if (written > spec.max_items) report(`"${prefix}${key}" allows at most ${spec.max_items} block(s), found ${written}`);
  }

  // Rule 3: required arguments (one from the environment counts as given).
  for (const [key, spec] of Object.entries(args)) {
    if (!spec.required || present.has(key)) continue;
    if (spec.default_from_env?.length) continue;
    report(`missing required argument "${prefix}${key}"`);
  }

  // Rule 4: conflicts_with and required_with.
  const reported = new Set();
  for (const key of present) {
    const spec = args[key];
    for (const other of spec.conflicts_with ?? []) {
      const otherKey = other.split('.')[0];
      const pair = [key, otherKey].sort().join(' ');
      if (present.has(otherKey) && !reported.has(pair)) {
        reported.add(pair);
        report(`"${prefix}${pair.split(' ')[0]}" conflicts with "${prefix}${pair.split(' ')[1]}"`);
      }
    }
    for (const other of spec.required_with ?? []) {
      if (!present.has(other.split('.')[0])) report(`"${prefix}${key}" requires "${prefix}${other}"`);
    }
  }
  // exactly_one_of / at_least_one_of: one of the group must be set (two of an exactly_one_of group are
  // also a conflicts_with pair, reported above).
  const groups = new Map();
  for (const spec of Object.values(args)) {
    for (const [rule, list] of [['exactly', spec.exactly_one_of], ['at least', spec.at_least_one_of]]) {
      if (!list?.length) continue;
      const names = [...new Set(list.map((o) => o.split('.')[0]))].sort();
      groups.set(`${rule} ${names.join(' ')}`, { rule, names });
    }
  }
  for (const { rule, names } of groups.values()) {
    if (!names.some((n) => present.has(n))) {
      report(`${rule === 'exactly' ? 'exactly one' : 'at least one'} of ${names.map((n) => `"${prefix}${n}"`).join(', ')} must be set`);
    }
  }
}

// ---- references ------------------------------------------------------------------------------

// Calls visit(string) for every string in a JSON value.
function eachString(value, visit) {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const v of value) eachString(v, visit);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) eachString(v, visit);
}

async function referencesIn(file, value) {
  const refs = [];
  const strings = [];
  eachString(value, (s) => { if (isExpression(s)) strings.push(s); });
  for (const s of strings) {
    for (const r of await hcl2json.getReferencesInExpression(file, s)) refs.push(r.value);
  }
  return refs;
}

// ---- module ----------------------------------------------------------------------------------

// Checks the .tf files given; returns {problems: [line...], blocks, variables}.
async function checkFiles(files, reference) {
  const problems = [];
  let blocks = 0;
  const declared = new Map(); // variable name -> file
  const used = new Set();
  const uses = []; // {file, what, name}

  for (const file of files) {
    const shown = path.relative(process.cwd(), file) || file;
    const text = fs.readFileSync(file, 'utf8');
    let json;
    try {
      json = await hcl2json.parse(path.basename(file), text);
    } catch (e) {
      problems.push(`${shown}: cannot parse: ${String(e.message ?? e).split('\n')[0]}`);
      continue;
    }
    const src = scanStructure(text);

    for (const kind of ['resource', 'data']) {
      const k = reference.kinds[kind];
      for (const [type, byName] of Object.entries(json[kind] ?? {})) {
        for (const [name, bodies] of Object.entries(byName)) {
          for (const body of [].concat(bodies)) {
            blocks++;
            const label = `${kind === 'data' ? 'data' : 'resource'} ${type}.${name}`;
            const report = (msg) => problems.push(`${shown}: ${label}: ${msg}`);
            // Rule 1: a known, current type.
            if (k.removed.has(type) || reference.removed.has(type)) { report(`${type} was removed in provider ${reference.major}.0`); continue; }
            const typeSchema = k.schemas[type];
            if (!typeSchema) {
              report(k.all.has(type) ? `${type} is not covered by the argument reference` : `unknown ${kind === 'data' ? 'data source' : 'resource'} type ${type}`);
              continue;
            }
            const srcBlock = src.blocks.find((b) => b.type === kind && b.labels[0] === type && b.labels[1] === name);
            if (!srcBlock) report('block not found by the source scanner; how its keys are written is not checked');
            const versions = {
              removed: new Set(k.argsRemoved[type] ?? []),
              added: new Set([...(k.argsAdded[type] ?? []), ...k.addedEverywhere]),
              major: reference.major, version: reference.ref.version,
            };
            checkBody(body, srcBlock?.body ?? null, typeSchema.arguments, '', report,
              { kind, type, typeSchema, meta: k.meta, computedOnlyNow: reference.computedOnlyNow }, versions);
          }
        }
      }
    }

    // The provider block: provider arguments only, and no secrets.
    const pname = reference.name;
    for (const body of [].concat(json.provider?.[pname] ?? [])) {
      blocks++;
      const report = (msg) => problems.push(`${shown}: provider ${pname}: ${msg}`);
      for (const [key, value] of Object.entries(body)) {
        if (key === 'alias') continue;
        const spec = reference.ref.provider_arguments[key];
        if (!spec) {
          const added = reference.providerAdded.has(key);
          report(`unknown provider argument "${key}"${added ? ` (added in provider ${reference.major}.x; not in ${reference.ref.version})` : ''}`);
        } else if (spec.sensitive) report(`"${key}" is a credential; it belongs in ${reference.credentialsFrom}, not in the module`);
        else if (spec.type === 'block') {
          if (!isBlockList(value)) { report(`"${key}" is a block; write "${key} { ... }", not "${key} = ..."`); continue; }
          for (const b of value) {
            for (const k of Object.keys(b)) if (reference.providerRemoved.has(`${key}.${k}`)) report(`"${key}.${k}" was removed in provider ${reference.major}.0`);
          }
        } else checkLiteral(spec, value, key, report);
      }
    }
    const rp = [].concat(json.terraform ?? []).flatMap((t) => [].concat(t.required_providers ?? []));
    for (const p of rp) {
      if (p[pname] && p[pname].source !== reference.ref.provider) {
        problems.push(`${shown}: terraform: required provider ${pname} has source ${show(p[pname].source)}, expected ${show(reference.ref.provider)}`);
      }
    }

    // Variables and references.
    for (const [name, bodies] of Object.entries(json.variable ?? {})) {
      declared.set(name, shown);
      for (const r of await referencesIn(file, bodies)) {
        const m = /^var\.([A-Za-z0-9_-]+)/.exec(r);
        if (m && m[1] !== name) { used.add(m[1]); uses.push({ file: shown, what: `variable ${name}`, name: m[1] }); }
      }
    }
    for (const [section, value] of Object.entries(json)) {
      if (section === 'variable') continue;
      const entries = section === 'resource' || section === 'data'
        ? Object.entries(value).flatMap(([type, byName]) => Object.entries(byName).map(([n, v]) => [`${section === 'data' ? 'data' : 'resource'} ${type}.${n}`, v]))
        : section === 'output' || section === 'provider' || section === 'module'
          ? Object.entries(value).map(([n, v]) => [`${section} ${n}`, v])
          : [[section, value]];
      for (const [what, v] of entries) {
        for (const r of await referencesIn(file, v)) {
          const m = /^var\.([A-Za-z0-9_-]+)/.exec(r);
          if (m) { used.add(m[1]); uses.push({ file: shown, what, name: m[1] }); }
          const type = r.replace(/^data\./, '').split('.')[0];
          if (reference.removed.has(type)) problems.push(`${shown}: ${what}: references ${type}, removed in provider ${reference.major}.0`);
        }
      }
    }
  }

  for (const [name, file] of declared) if (!used.has(name)) problems.push(`${file}: variable ${name}: declared but never used`);
  const undeclared = new Set();
  for (const u of uses) {
    const key = `${u.file} ${u.what} ${u.name}`;
    if (!declared.has(u.name) && !undeclared.has(key)) {
      undeclared.add(key);
      problems.push(`${u.file}: ${u.what}: var.${u.name} is not declared`);
    }
  }
  return { problems, blocks, variables: declared.size };
}

function tfFiles(target) {
  const st = fs.statSync(target);
  if (!st.isDirectory()) return [target];
  return fs.readdirSync(target).filter((f) => f.endsWith('.tf')).sort().map((f) => path.join(target, f));
}

// ---- main ------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
let referenceFile = path.join(here, '..', '..', '..', 'shared', 'reference', 'openstack-provider-arguments.json');
let expectFail = false;
const targets = [];
for (let a = 0; a < argv.length; a++) {
  if (argv[a] === '--reference') referenceFile = argv[++a];
  else if (argv[a] === '--expect-fail') expectFail = true;
  else if (argv[a] === '-h' || argv[a] === '--help') {
    console.log('usage: check_module.mjs [--reference FILE] [DIR_OR_FILE...]\n       check_module.mjs [--reference FILE] --expect-fail FILE.tf...');
    process.exit(0);
  } else targets.push(argv[a]);
}
const reference = loadReference(referenceFile);

if (!expectFail) {
  const dirs = targets.length ? targets : [path.join(repoRoot, 'src', 'targets', reference.name, 'terraform')];
  const files = dirs.flatMap(tfFiles);
  if (files.length === 0) { console.error(`check_module: no .tf files in ${dirs.join(' ')}`); process.exit(2); }
  const { problems, blocks, variables } = await checkFiles(files, reference);
  for (const p of problems) console.log(p);
  console.log(`checked ${blocks} blocks and ${variables} variables in ${files.length} files against provider ${reference.ref.version}, ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
  process.exit(problems.length ? 1 : 0);
}

// --expect-fail: every "# expect: TEXT" matches a problem, and every problem matches an expectation.
if (targets.length === 0) { console.error('check_module: --expect-fail needs .tf files'); process.exit(2); }
let failed = 0;
for (const file of targets.flatMap(tfFiles)) {
  const shown = path.relative(process.cwd(), file) || file;
  const expected = [...fs.readFileSync(file, 'utf8').matchAll(/^\s*#\s*expect:\s*(.+?)\s*$/gm)].map((m) => m[1]);
  const { problems } = await checkFiles([file], reference);
  const missing = expected.filter((e) => !problems.some((p) => p.includes(e)));
  const unexpected = problems.filter((p) => !expected.some((e) => p.includes(e)));
  if (expected.length === 0) {
    console.log(`FAIL ${shown}: no "# expect:" line`);
    failed++;
  } else if (missing.length || unexpected.length) {
    failed++;
    console.log(`FAIL ${shown}`);
    for (const m of missing) console.log(`  expected, not reported: ${m}`);
    for (const u of unexpected) console.log(`  reported, not expected: ${u}`);
  } else {
    for (const p of problems) console.log(`ok   ${p}`);
  }
}
process.exit(failed ? 1 : 0);
