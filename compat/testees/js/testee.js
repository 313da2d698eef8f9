#!/usr/bin/env node
// Example testee in JavaScript: a reader and writer of spec 1.2.0 of the refit rendezvous
// blob, speaking the conformance protocol (one JSON object per line on stdin/stdout,
// diagnostics on stderr). Node.js >= 18, no packages.
//
// The hazard this file exists to show: JSON.parse turns every number into a double, so an
// `addr` above 2^53 is silently rounded (READ_EXACT_INTEGERS). Blobs AND protocol lines are
// therefore parsed by the small parser below, which keeps integer literals as BigInt and
// marks numbers with a fraction or exponent (JsonFloat), and every line is written by
// `dumps`, which prints BigInts digit for digit. See README.md.
//
// It answers `digest` too (SPEC.md section 4): the digest of a box of a row-major tensor.
//
// Extension: a read request may carry "document": "shard-table" to read a standalone shard
// table (decoded form {"tensors": [...]}); the default is "rendezvous".
'use strict';

const VERSION = '1.2.0';
const WIRE_ID = 'mx.reshard.shard_table.v1';
const MAX_BLOB = 64 * 1024 * 1024;
const MAX_DEPTH = 1024;
const U64 = 1n << 64n;
const I63 = 1n << 63n;
const I31 = 1n << 31n;
const DTYPE_LABEL = /^(?:torch\.)?[a-z][a-z0-9_]*$/;
const DIGEST = /^[0-9a-f]{32}$/;
// Padded standard base64 (with a length that is a multiple of 4). Written without a repeated
// group: V8 backtracks such a group on its stack and overflows on megabyte strings.
const BASE64_BODY = /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]=|==)?$/;
const isBase64 = (text) => text.length % 4 === 0 && BASE64_BODY.test(text);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
// A string needing the slow path in (an escape, a control character, a surrogate) and out
// (anything Python's json.dumps escapes).
const SPECIAL_IN_STRING = /[\\\x00-\x1f\ud800-\udfff]/;
const NEEDS_ESCAPE = /[^\x20-\x7e]|["\\]/;
const SMALL_INTS = Array.from({ length: 1 << 16 }, (_, n) => BigInt(n));
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const DTYPE_SIZES = {
  bool: 1, uint8: 1, int8: 1, float8_e4m3fn: 1, float8_e5m2: 1,
  float8_e4m3fnuz: 1, float8_e5m2fnuz: 1, float8_e8m0fnu: 1,
  int16: 2, uint16: 2, float16: 2, half: 2, bfloat16: 2,
  int32: 4, uint32: 4, float32: 4, float: 4, complex32: 4,
  int64: 8, uint64: 8, float64: 8, double: 8, long: 8, complex64: 8,
  complex128: 16,
};
const REQUIRED = {
  rendezvous: ['schema', 'agent_name', 'agent_meta_b64', 'tensors'],
  'shard-table': ['schema', 'tensors'],
  tensor: ['name', 'dtype', 'elsize', 'full_shape', 'shards'],
  shard: ['agent_name', 'device_id', 'addr', 'shard_offset', 'shape'],
};

/** A JSON number written with a fraction or exponent: never an integer in this spec. */
class JsonFloat {
  constructor(text) {
    this.text = text;
    this.value = Number(text);
  }
}

class Reject extends Error {
  constructor(rule, at, message) {
    super(message);
    this.rule = rule;
    this.at = at;
    this.pointer = at.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
  }
}

class BadRequest extends Error {}

const has = (obj, name) => Object.prototype.hasOwnProperty.call(obj, name);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonFloat);
const short = (v) => {
  const text = typeof v === 'bigint' ? v.toString() : v instanceof JsonFloat ? v.text : dumps(v);
  return text.length <= 60 ? text : text.slice(0, 57) + '...';
};

// -- JSON text in: exact integers, Python's duplicate-name rule, no lone surrogates ---------

/** Parse one JSON text (RFC 8259). Throws SyntaxError on anything that is not exactly one. */
function parseJson(text) {
  let i = 0;
  const fail = (what) => {
    throw new SyntaxError(`${what} at offset ${i}`);
  };
  const ws = () => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  };
  const value = (depth) => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH}`);
      return c === '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c === '"') return string();
    const word = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : null;
    if (word !== null && text.startsWith(word, i)) {
      i += word.length;
      return c === 't' ? true : c === 'f' ? false : null;
    }
    // A short plain integer (most of a table: offsets, shapes, ranks) without a regex match,
    // and below 2^16 without a new BigInt: at the limit they are millions.
    let j = i;
    for (let d = text.charCodeAt(j); d >= 0x30 && d <= 0x39; d = text.charCodeAt(++j));
    const after = text.charCodeAt(j);
    if (j > i && j - i <= 5 && (text.charCodeAt(i) !== 0x30 || j - i === 1) && after !== 0x2e && after !== 0x65 && after !== 0x45) {
      const n = Number(text.slice(i, j));
      i = j;
      return n < SMALL_INTS.length ? SMALL_INTS[n] : BigInt(n);
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail(c === undefined ? 'unexpected end of input' : `unexpected ${JSON.stringify(c)}`);
    // Numbers a double cannot hold are refused (section 5 lets a reader bound its input).
    if (!Number.isFinite(Number(m[0]))) fail('a number that overflows a double');
    i += m[0].length;
    return m[1] || m[2] ? new JsonFloat(m[0]) : BigInt(m[0]);
  };
  const object = (depth) => {
    const obj = Object.create(null); // no prototype: "__proto__" is an ordinary name
    i++;
    ws();
    if (text[i] === '}') return i++, obj;
    for (;;) {
      ws();
      if (text[i] !== '"') fail('expected a member name');
      const name = string();
      ws();
      if (text[i++] !== ':') fail("expected ':'");
      obj[name] = value(depth); // a repeated name: the last one wins, as in every released reader
      ws();
      const c = text[i++];
      if (c === '}') return obj;
      if (c !== ',') fail("expected ',' or '}'");
    }
  };
  const array = (depth) => {
    const items = [];
    i++;
    ws();
    if (text[i] === ']') return i++, items;
    for (;;) {
      items.push(value(depth));
      ws();
      const c = text[i++];
      if (c === ']') return items;
      if (c !== ',') fail("expected ',' or ']'");
    }
  };
  const string = () => {
    let out = '';
    let start = ++i;
    // Most strings (names, digests, a megabyte of base64) hold no escape, control character
    // or surrogate: found whole by two scans in V8's own code rather than char by char.
    const end = text.indexOf('"', start);
    if (end !== -1) {
      const plain = text.slice(start, end);
      if (!SPECIAL_IN_STRING.test(plain)) {
        i = end + 1;
        return plain;
      }
    }
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) fail('unterminated string');
      if (c === 0x22) break;
      if (c < 0x20) fail('control character in a string');
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && has(ESCAPES, e)) {
          out += ESCAPES[e];
          i += 2;
        } else {
          fail('bad escape');
        }
        start = i;
      } else {
        i++;
      }
    }
    out += text.slice(start, i++);
    for (let k = 0; k < out.length; k++) {
      const u = out.charCodeAt(k);
      if (u >= 0xd800 && u <= 0xdbff && k + 1 < out.length) {
        const next = out.charCodeAt(k + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          k++;
          continue;
        }
      }
      if (u >= 0xd800 && u <= 0xdfff) fail('a lone surrogate is not Unicode text');
    }
    return out;
  };
  const result = value(0);
  ws();
  if (i !== text.length) fail('trailing data');
  return result;
}

// -- JSON text out: Python json.dumps defaults, exact integers -------------------------------

const SHORT_ESCAPES = { 0x22: '\\"', 0x5c: '\\\\', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x08: '\\b', 0x0c: '\\f' };

function pyString(s) {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (has(SHORT_ESCAPES, c)) out += SHORT_ESCAPES[c];
    else if (c < 0x20 || c > 0x7e) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += s[k];
  }
  return out + '"';
}

/** `json.dumps(value)` as Python writes it: ", " and ": ", ASCII only, members in order. */
function dumps(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || v === undefined) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof JsonFloat) return v.text;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`${v} is not JSON`);
    return String(v);
  }
  if (typeof v === 'string') return pyString(v);
  if (Array.isArray(v)) return '[' + v.map(dumps).join(', ') + ']';
  return '{' + Object.keys(v).map((k) => pyString(k) + ': ' + dumps(v[k])).join(', ') + '}';
}

// -- reading ---------------------------------------------------------------------------------

function parseBlob(blob) {
  if (blob.length > MAX_BLOB) throw new Reject('BLOB_SIZE', [], `${blob.length} bytes: over the ${MAX_BLOB}-byte limit`);
  if (blob[0] === 0xef && blob[1] === 0xbb && blob[2] === 0xbf) {
    throw new Reject('UTF8', [], 'a blob must not start with a byte order mark');
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(blob);
  } catch (exc) {
    throw new Reject('UTF8', [], `not UTF-8: ${exc.message}`);
  }
  let doc;
  try {
    doc = parseJson(text);
  } catch (exc) {
    throw new Reject('JSON', [], `not one JSON text: ${exc.message}`);
  }
  if (!isObject(doc)) throw new Reject('OBJECT', [], `${short(doc)}: the top level must be a JSON object`);
  return doc;
}

function required(obj, kind, at) {
  if (!isObject(obj)) throw new Reject('TYPE', at, `${short(obj)}: a ${kind} is a JSON object`);
  for (const name of REQUIRED[kind]) {
    if (!has(obj, name)) throw new Reject('REQUIRED', at, `${kind} has no "${name}"`);
  }
}

function string(obj, name, at, optional = false) {
  const v = has(obj, name) ? obj[name] : null;
  if (typeof v !== 'string' && !(optional && v === null)) {
    throw new Reject('TYPE', [...at, name], `${short(v)}: ${name} is a string`);
  }
}

function integer(v, at, rule, low, high) {
  // SPEC.md section 2.7: a number with an integer value (4096.0, 1e300) is range-checked first,
  // as JSON Schema does; only an in-range one is then an INTEGER_LITERAL violation.
  if (v instanceof JsonFloat && Number.isInteger(v.value)) {
    if (v.value < Number(low) || v.value >= Number(high)) throw new Reject(rule, at, `${v.text}: out of [${low}, ${high})`);
    // Step 4: reported only when the whole structure (step 3) is sound.
    later(new Reject('INTEGER_LITERAL', at, `${v.text}: integers are written without fraction or exponent`));
    return;
  }
  if (typeof v !== 'bigint') throw new Reject('TYPE', at, `${short(v)}: not an integer`);
  if (v < low || v >= high) throw new Reject(rule, at, `${v}: out of [${low}, ${high})`);
}

function sizes(obj, name, at) {
  const v = obj[name];
  if (!Array.isArray(v)) throw new Reject('TYPE', [...at, name], `${short(v)}: ${name} is an array of integers`);
  v.forEach((item, d) => integer(item, [...at, name, d], 'SIZE_RANGE', 0n, I63));
}

function canonicalBase64(text) {
  if (!isBase64(text)) return false;
  if (text.endsWith('==')) return (ALPHABET.indexOf(text[text.length - 3]) & 0b1111) === 0;
  if (text.endsWith('=')) return (ALPHABET.indexOf(text[text.length - 2]) & 0b11) === 0;
  return true;
}

// SPEC.md section 2.7: within step 3 the first violation in document order is reported, so each
// object's members are checked in the order they are written (a repeated name where it first
// appears, as a JavaScript object keeps it), never in the order of the schema.
function checkMembers(obj, checks, at) {
  for (const name of Object.keys(obj)) {
    if (has(checks, name)) checks[name](obj, at);
  }
}

const TOP_CHECKS = {
  agent_name: (doc, at) => string(doc, 'agent_name', at),
  metadata_endpoint: (doc, at) => string(doc, 'metadata_endpoint', at, true),
  agent_meta_b64: (doc, at) => {
    string(doc, 'agent_meta_b64', at);
    if (!isBase64(doc.agent_meta_b64)) {
      throw new Reject('AGENT_META_BASE64', ['agent_meta_b64'], `${short(doc.agent_meta_b64)}: not base64`);
    }
    if (!canonicalBase64(doc.agent_meta_b64)) {  // the pad bits: step 4
      later(new Reject('AGENT_META_BASE64', ['agent_meta_b64'], `${short(doc.agent_meta_b64)}: pad bits are not zero`));
    }
  },
  tensors: (doc) => {
    if (!Array.isArray(doc.tensors)) throw new Reject('TYPE', ['tensors'], `${short(doc.tensors)}: tensors is an array`);
    doc.tensors.forEach((tensor, t) => checkTensor(tensor, ['tensors', t]));
  },
  publisher_step: (doc) => {
    if (doc.publisher_step !== null) integer(doc.publisher_step, ['publisher_step'], 'STEP_RANGE', 0n, I63);
  },
};
const TABLE_CHECKS = { tensors: TOP_CHECKS.tensors };

const TENSOR_CHECKS = {
  name: (tensor, at) => string(tensor, 'name', at),
  dtype: (tensor, at) => {
    string(tensor, 'dtype', at);
    if (!DTYPE_LABEL.test(tensor.dtype)) {
      throw new Reject('DTYPE_LABEL', [...at, 'dtype'], `${short(tensor.dtype)}: not a dtype label`);
    }
  },
  elsize: (tensor, at) => integer(tensor.elsize, [...at, 'elsize'], 'ELSIZE_RANGE', 1n, 65n),
  full_shape: (tensor, at) => sizes(tensor, 'full_shape', at),
  shards: (tensor, at) => {
    if (!Array.isArray(tensor.shards)) {
      throw new Reject('TYPE', [...at, 'shards'], `${short(tensor.shards)}: shards is an array`);
    }
    tensor.shards.forEach((shard, s) => checkShard(shard, [...at, 'shards', s]));
  },
};

const SHARD_CHECKS = {
  agent_name: (shard, at) => string(shard, 'agent_name', at),
  device_id: (shard, at) => integer(shard.device_id, [...at, 'device_id'], 'DEVICE_ID_RANGE', 0n, I31),
  addr: (shard, at) => integer(shard.addr, [...at, 'addr'], 'ADDR_RANGE', 0n, U64),
  shard_offset: (shard, at) => sizes(shard, 'shard_offset', at),
  shape: (shard, at) => sizes(shard, 'shape', at),
  digest: (shard, at) => {
    if (shard.digest === null) return;
    string(shard, 'digest', at);
    if (!DIGEST.test(shard.digest)) {
      throw new Reject('DIGEST_FORMAT', [...at, 'digest'], `${short(shard.digest)}: not 32 lowercase hex digits`);
    }
  },
};

function checkStructure(doc, kind) {
  if (has(doc, 'schema') && doc.schema !== WIRE_ID) {
    throw new Reject('SCHEMA_ID', ['schema'], `${short(doc.schema)}: not ${WIRE_ID}`);
  }
  required(doc, kind, []);
  checkMembers(doc, kind === 'rendezvous' ? TOP_CHECKS : TABLE_CHECKS, []);
}

function checkTensor(tensor, at) {
  required(tensor, 'tensor', at);
  checkMembers(tensor, TENSOR_CHECKS, at);
}

function checkShard(shard, at) {
  required(shard, 'shard', at);
  checkMembers(shard, SHARD_CHECKS, at);
}

/** An integer as the rules compute with it: one written as 4096.0 (INTEGER_LITERAL, reported
 * in its place in the document) still has its value. */
const int = (v) => (v instanceof JsonFloat ? BigInt(v.value) : v);

function checkGeometry(doc) {
  doc.tensors.forEach((tensor, t) => {
    const { dtype } = tensor;
    const elsize = int(tensor.elsize);
    const full = tensor.full_shape.map(int);
    const label = dtype.startsWith('torch.') ? dtype.slice('torch.'.length) : dtype;
    const known = has(DTYPE_SIZES, label) ? BigInt(DTYPE_SIZES[label]) : null;
    if (known !== null && known !== elsize) {
      later(new Reject('ELSIZE_DTYPE', ['tensors', t, 'elsize'], `${elsize}: ${dtype} elements are ${known} bytes`));
    }
    tensor.shards.forEach((shard, s) => {
      const at = ['tensors', t, 'shards', s];
      const [offset, shape, addr] = [shard.shard_offset.map(int), shard.shape.map(int), int(shard.addr)];
      if (!(offset.length === shape.length && shape.length === full.length)) {
        later(new Reject('RANK_AGREEMENT', at, `ranks ${offset.length}, ${shape.length}, ${full.length} differ`));
        return;
      }
      for (let d = 0; d < full.length; d++) {
        if (offset[d] + shape[d] > full[d]) {
          later(new Reject('BOX_IN_BOUNDS', [...at, 'shape', d], `${shape[d]}: box ends past ${full[d]}`));
        }
      }
      let nbytes = shape.includes(0n) ? 0n : elsize;
      for (const extent of shape) {
        if (nbytes > U64) break;
        nbytes *= extent;
      }
      if (addr + nbytes > U64) {
        later(new Reject('ADDR_SPAN', [...at, 'addr'], `${addr}: ${nbytes} bytes wrap past 2^64`));
      }
    });
  });
}

// SPEC.md section 2.7: the violations of step 4 (INTEGER_LITERAL, the pad bits, the geometry)
// wait until the structure (step 3) is checked in full; the first in document order is reported.
let deferred = [];

function later(reject) {
  deferred.push(reject);
}

/** Whether the value at path ``a`` is written before the one at ``b`` in ``doc``: a value before
 * the values inside it, array items by index, an object's members in the order written. */
function before(doc, a, b) {
  let node = doc;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return Array.isArray(node) ? a[i] < b[i] : Object.keys(node).indexOf(a[i]) < Object.keys(node).indexOf(b[i]);
    }
    node = node[a[i]];
  }
  return a.length < b.length;
}

function firstInDocument(doc, rejects) {
  return rejects.reduce((first, r) => {
    if (before(doc, r.at, first.at)) return r;
    if (before(doc, first.at, r.at)) return first;
    return r.rule < first.rule ? r : first; // one place: by rule ID in ASCII order (SPEC 2.7)
  });
}

function read(blob, kind) {
  const doc = parseBlob(blob);
  deferred = [];
  checkStructure(doc, kind);
  checkGeometry(doc);
  if (deferred.length) throw firstInDocument(doc, deferred);
  const tensors = doc.tensors.map((t) => ({
    name: t.name,
    dtype: t.dtype,
    elsize: t.elsize,
    full_shape: t.full_shape,
    shards: t.shards.map((s) => ({
      agent_name: s.agent_name,
      device_id: s.device_id,
      addr: s.addr,
      shard_offset: s.shard_offset,
      shape: s.shape,
      digest: has(s, 'digest') ? s.digest : null,
    })),
  }));
  if (kind === 'shard-table') return { tensors };
  return {
    agent_name: doc.agent_name,
    metadata_endpoint: has(doc, 'metadata_endpoint') && doc.metadata_endpoint !== null ? doc.metadata_endpoint : '',
    agent_meta_b64: doc.agent_meta_b64,
    publisher_step: has(doc, 'publisher_step') ? doc.publisher_step : null,
    tensors,
  };
}

/** The count-only read (IMPLEMENTERS.md): this one checks the whole blob, as the full read does
 * (a count-only read may leave the entries unchecked, never more), then reports every member but
 * the table and the number of the table's entries. */
function count(blob) {
  const { tensors, ...envelope } = read(blob, 'rendezvous');
  return { envelope, entries: BigInt(tensors.length) };
}

// -- merging (a receiver's, SPEC.md section 2.6) ---------------------------------------------

/** The tables of several publishers (decoded tensors) as one: by tensor name, which must agree on
 * dtype (with or without torch.), elsize and full_shape; one shard per box, the first seen in
 * table order, then shard order. */
function merge(tables) {
  const merged = new Map();
  tables.forEach((table, r) => {
    if (!Array.isArray(table)) throw new BadRequest(`tables[${r}] is ${short(table)}, not an array`);
    table.forEach((tensor, t) => {
      const shards = array(tensor, 'shards', `tables[${r}][${t}]`);
      const agreed = [label(field(tensor, 'dtype', 'a tensor')), dumps(tensor.elsize), dumps(tensor.full_shape)];
      let kept = merged.get(tensor.name);
      if (kept === undefined) {
        kept = { tensor: { ...tensor, shards: [] }, agreed, boxes: new Set() };
        merged.set(tensor.name, kept);
      } else if (dumps(kept.agreed) !== dumps(agreed)) {
        throw new Reject('MERGE_CONSISTENT', ['tensors', t], `table ${r} publishes ${short(tensor.name)} as ${dumps(agreed)}, an earlier one as ${dumps(kept.agreed)}`);
      }
      for (const shard of shards) {
        const box = dumps([shard.shard_offset, shard.shape]);
        if (!kept.boxes.has(box)) {
          kept.boxes.add(box);
          kept.tensor.shards.push(shard);
        }
      }
    });
  });
  return [...merged.values()].map((kept) => kept.tensor);
}

const label = (dtype) => (typeof dtype === 'string' && dtype.startsWith('torch.') ? dtype.slice('torch.'.length) : dtype);

// -- writing ---------------------------------------------------------------------------------

function field(obj, name, where) {
  if (!isObject(obj) || !has(obj, name)) throw new BadRequest(`${where} has no "${name}"`);
  return obj[name];
}

function array(obj, name, where) {
  const v = field(obj, name, where);
  if (!Array.isArray(v)) throw new BadRequest(`${where}.${name} is ${short(v)}, not an array`);
  return v;
}

const optional = (obj, name) => (has(obj, name) ? obj[name] : null);

/** A payload value of the JSON type it must have; a refusal naming TYPE otherwise (SPEC WRITE_VALID). */
function typed(value, isRight, where, kind) {
  if (!isRight(value)) throw new BadRequest(`${where} is ${short(value)}, not ${kind} [TYPE]`);
  return value;
}
const arrayIn = (obj, name, where) => typed(member(obj, name, where), Array.isArray, `${where}.${name}`, 'an array');

/** A payload member a writer needs; a refusal naming REQUIRED where it is missing. */
function member(obj, name, where) {
  if (!has(obj, name)) throw new BadRequest(`${where} has no "${name}" [REQUIRED]`);
  return obj[name];
}

function write(payload) {
  const meta = member(payload, 'agent_meta_b64', 'payload');
  typed(meta, (v) => typeof v === 'string', 'payload.agent_meta_b64', 'a string');
  if (!canonicalBase64(meta)) {
    // Refuse rather than re-encode: the payload would not be what the blob carries.
    throw new BadRequest(`payload.agent_meta_b64 ${short(meta)} is not canonical padded base64 [AGENT_META_BASE64]`);
  }
  const endpoint = optional(payload, 'metadata_endpoint');
  const doc = {
    schema: WIRE_ID,
    agent_name: member(payload, 'agent_name', 'payload'),
    metadata_endpoint: endpoint === null ? '' : endpoint,
    agent_meta_b64: meta,
    tensors: arrayIn(payload, 'tensors', 'payload').map((t, i) => {
      const where = `payload.tensors[${i}]`;
      typed(t, isObject, where, 'an object');
      const entry = {};
      for (const k of ['name', 'dtype', 'elsize', 'full_shape']) entry[k] = member(t, k, where);
      entry.shards = arrayIn(t, 'shards', where).map((s, j) => {
        typed(s, isObject, `${where}.shards[${j}]`, 'an object');
        const shard = {};
        for (const k of REQUIRED.shard) shard[k] = member(s, k, `${where}.shards[${j}]`);
        if (optional(s, 'digest') !== null) shard.digest = s.digest;
        return shard;
      });
      return entry;
    }),
  };
  if (optional(payload, 'publisher_step') !== null) doc.publisher_step = payload.publisher_step;
  const blob = Buffer.from(dumps(doc), 'ascii');
  try {
    read(blob, 'rendezvous'); // WRITE_VALID: never emit what a reader refuses
  } catch (exc) {
    if (!(exc instanceof Reject)) throw exc;
    throw new BadRequest(`refusing to write an invalid blob: ${exc.message} [${exc.rule} at ${exc.pointer}]`);
  }
  return blob;
}

// -- the per-shard digest (SPEC.md section 4) ------------------------------------------------

const MASK64 = U64 - 1n;
const BLAKE2B_IV = [
  0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n,
];
const BLAKE2B_SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4], [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13], [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11], [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5], [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];
const rotr64 = (x, n) => ((x >> n) | (x << (64n - n))) & MASK64;

/** BLAKE2b (RFC 7693) with an `outLength`-byte digest, no key: 64-bit words as BigInt. */
function blake2b(message, outLength) {
  const h = BLAKE2B_IV.slice();
  h[0] ^= 0x01010000n ^ BigInt(outLength);
  const blocks = Math.max(1, Math.ceil(message.length / 128));
  for (let b = 0; b < blocks; b++) {
    const block = Buffer.alloc(128);
    message.copy(block, 0, b * 128, Math.min(message.length, (b + 1) * 128));
    const last = b === blocks - 1;
    const m = Array.from({ length: 16 }, (_, i) => block.readBigUInt64LE(i * 8));
    const v = [...h, ...BLAKE2B_IV];
    v[12] ^= BigInt(last ? message.length : (b + 1) * 128);
    if (last) v[14] ^= MASK64;
    const g = (a, bb, c, d, x, y) => {
      v[a] = (v[a] + v[bb] + x) & MASK64;
      v[d] = rotr64(v[d] ^ v[a], 32n);
      v[c] = (v[c] + v[d]) & MASK64;
      v[bb] = rotr64(v[bb] ^ v[c], 24n);
      v[a] = (v[a] + v[bb] + y) & MASK64;
      v[d] = rotr64(v[d] ^ v[a], 16n);
      v[c] = (v[c] + v[d]) & MASK64;
      v[bb] = rotr64(v[bb] ^ v[c], 63n);
    };
    for (let round = 0; round < 12; round++) {
      const s = BLAKE2B_SIGMA[round % 10];
      g(0, 4, 8, 12, m[s[0]], m[s[1]]);
      g(1, 5, 9, 13, m[s[2]], m[s[3]]);
      g(2, 6, 10, 14, m[s[4]], m[s[5]]);
      g(3, 7, 11, 15, m[s[6]], m[s[7]]);
      g(0, 5, 10, 15, m[s[8]], m[s[9]]);
      g(1, 6, 11, 12, m[s[10]], m[s[11]]);
      g(2, 7, 8, 13, m[s[12]], m[s[13]]);
      g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
  }
  const out = Buffer.alloc(64);
  h.forEach((word, i) => out.writeBigUInt64LE(word, i * 8));
  return out.subarray(0, outLength).toString('hex');
}

/** The digest of bytes: int32 words in 4 KiB rows reduced to a few sums, hashed with BLAKE2b-128. */
function digestBytes(data) {
  const n = data.length;
  const words = Math.floor(n / 4);
  const rows = Math.floor(words / 1024);
  const scalars = [BigInt(n)];
  if (rows > 0) {
    let s1 = 0n;
    let s2 = 0n;
    for (let r = 0; r < rows; r++) {
      let sum = 0; // at most 1024 * 2^31 in magnitude: exact as a double
      for (let i = 0; i < 1024; i++) sum += data.readInt32LE((r * 1024 + i) * 4);
      s1 += BigInt(sum);
      s2 += BigInt(r + 1) * BigInt(sum);
    }
    scalars.push(s1, s2);
  }
  if (words > rows * 1024) {
    let sum = 0n;
    let weighted = 0n;
    for (let i = 0; i < words - rows * 1024; i++) {
      const w = BigInt(data.readInt32LE((rows * 1024 + i) * 4));
      sum += w;
      weighted += BigInt(i + 1) * w;
    }
    scalars.push(sum, weighted);
  }
  if (n % 4) {
    let ragged = 0;
    for (let i = words * 4; i < n; i++) ragged += data[i];
    scalars.push(BigInt(ragged), BigInt(n % 4));
  }
  const fed = Buffer.alloc(8 * scalars.length);
  scalars.forEach((v, i) => fed.writeBigUInt64LE(((v % U64) + U64) % U64, i * 8));
  return blake2b(fed, 16);
}

function sizeList(v, where) {
  if (!Array.isArray(v) || !v.every((d) => typeof d === 'bigint' && d >= 0n)) {
    throw new BadRequest(`${where} is ${short(v)}, not an array of sizes`);
  }
  return v.map(Number);
}

/** The digest request: the box `box` (default: all) of the row-major tensor in data_b64. */
function digest(request) {
  const b64 = field(request, 'data_b64', 'request');
  if (typeof b64 !== 'string' || !isBase64(b64)) throw new BadRequest('data_b64 is not padded standard base64');
  const data = Buffer.from(b64, 'base64');
  const label = field(request, 'dtype', 'request');
  const elsize = typeof label === 'string' ? DTYPE_SIZES[label.replace(/^torch\./, '')] : undefined;
  if (!has(DTYPE_SIZES, String(label).replace(/^torch\./, '')) || elsize === undefined) {
    throw new BadRequest(`unknown dtype ${short(label)}`);
  }
  const shape = sizeList(field(request, 'shape', 'request'), 'shape');
  if (data.length !== shape.reduce((a, d) => a * d, elsize)) {
    throw new BadRequest(`${data.length} bytes do not fill shape [${shape}] of ${label}`);
  }
  if (!has(request, 'box')) return digestBytes(data);
  const offset = sizeList(field(request.box, 'shard_offset', 'box'), 'box.shard_offset');
  const extent = sizeList(field(request.box, 'shape', 'box'), 'box.shape');
  if (offset.length !== shape.length || extent.length !== shape.length) throw new BadRequest('box rank mismatch');
  if (offset.some((o, d) => o + extent[d] > shape[d])) throw new BadRequest('the box is not inside the tensor');
  // Row-major strides in bytes; copy the box's innermost runs in order.
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, x) => a * x, elsize));
  const run = (extent.length ? extent[extent.length - 1] : 1) * elsize;
  const out = Buffer.alloc(extent.reduce((a, e) => a * e, elsize));
  let at = 0;
  const walk = (d, base) => {
    if (d >= extent.length - 1) {
      const start = base + (extent.length ? offset[d] * strides[d] : 0);
      at += data.copy(out, at, start, start + run);
      return;
    }
    for (let i = 0; i < extent[d]; i++) walk(d + 1, base + (offset[d] + i) * strides[d]);
  };
  if (out.length) walk(0, 0);
  return digestBytes(out);
}

// -- protocol --------------------------------------------------------------------------------

function handle(request) {
  if (!isObject(request)) throw new BadRequest(`a request is a JSON object, not ${short(request)}`);
  const cmd = optional(request, 'cmd');
  const seq = optional(request, 'seq');
  if (cmd === 'start') {
    if (optional(request, 'protocol') !== 1n) throw new BadRequest('unsupported protocol; this testee speaks 1');
    return {
      implementation: { name: 'refitwire-example-js', version: '0.1.0', language: 'javascript' },
      spec_version: VERSION,
      roles: ['reader', 'writer'],
    };
  }
  if (cmd === 'digest') {
    if (!has(request, 'seq')) throw new BadRequest('digest request has no "seq"');
    return { seq, digest: digest(request) };
  }
  if (cmd === 'merge') {
    if (!has(request, 'seq')) throw new BadRequest('merge request has no "seq"');
    try {
      return { seq, merged: merge(array(request, 'tables', 'request')) };
    } catch (exc) {
      if (!(exc instanceof Reject)) throw exc;
      return { seq, rejected: true, rule: exc.rule, pointer: exc.pointer, message: exc.message };
    }
  }
  if (cmd !== 'read' && cmd !== 'count' && cmd !== 'write') {
    return { seq, skipped: true, reason: `unknown command ${short(cmd)}` };
  }
  if (!has(request, 'seq')) throw new BadRequest(`${cmd} request has no "seq"`);
  if (cmd === 'write') {
    return { seq, blob_b64: write(field(request, 'payload', 'request')).toString('base64') };
  }
  const kind = has(request, 'document') ? request.document : 'rendezvous';
  if (kind !== 'rendezvous' && kind !== 'shard-table') throw new BadRequest(`unknown document ${short(kind)}`);
  const b64 = field(request, 'blob_b64', 'request');
  if (typeof b64 !== 'string' || !isBase64(b64)) throw new BadRequest('blob_b64 is not padded standard base64');
  try {
    const blob = Buffer.from(b64, 'base64');
    return cmd === 'count' ? { seq, ...count(blob) } : { seq, payload: read(blob, kind) };
  } catch (exc) {
    if (!(exc instanceof Reject)) throw exc;
    return { seq, rejected: true, rule: exc.rule, pointer: exc.pointer, message: exc.message };
  }
}

function answer(line) {
  let seq = null;
  try {
    const request = parseJson(new TextDecoder('utf-8', { fatal: true }).decode(line));
    if (isObject(request) && has(request, 'seq')) seq = request.seq;
    if (isObject(request) && request.cmd === 'stop') return null;
    return handle(request);
  } catch (exc) {
    // A bad request or a bug here: answered as errored, never fatal.
    process.stderr.write(`js testee: ${exc instanceof BadRequest ? exc.message : exc.stack}\n`);
    return { seq, errored: true, message: `${exc.constructor.name}: ${exc.message}` };
  }
}

/** Whether a request line holds only whitespace: read byte by byte, never copied into a string
 * (a size case's line is 85 MB, and its first byte answers). */
function blank(line) {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0b && byte !== 0x0c) return false;
  return true;
}

function main() {
  let pending = [];
  let stopped = false;
  const onLine = (line) => {
    if (stopped || blank(line)) return;
    const reply = answer(line);
    if (reply === null) {
      stopped = true;
      process.stdin.destroy(); // exit 0 once stdout is flushed
      return;
    }
    let text;
    try {
      text = dumps(reply);
    } catch (exc) {
      text = dumps({ seq: reply.seq ?? null, errored: true, message: `unserializable answer: ${exc.message}` });
    }
    process.stdout.write(text + '\n');
  };
  process.stdout.on('error', () => process.exit(0)); // the runner went away
  process.stdin.on('data', (chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1 && !stopped; nl = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(pending);
      pending = [];
      start = nl + 1;
      onLine(line);
    }
    if (!stopped && start < chunk.length) pending.push(chunk.subarray(start));
  });
  process.stdin.on('end', () => {
    if (pending.length) onLine(Buffer.concat(pending));
    process.exitCode = 0;
  });
}

main();
