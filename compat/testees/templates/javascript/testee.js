#!/usr/bin/env node
// A refitwire conformance testee template (protocol 1): Node.js >= 18, no packages.
// Run it as is: refitwire conformance --testee "node testee.js" --no-upstream
// Then put your reader and writer where it says YOUR CODE; README.md says more.
'use strict';
const readline = require('node:readline');

const IMPLEMENTATION = { name: 'my-implementation', version: '0.0.0', language: 'javascript' };
const SPEC_VERSION = '1.2.0'; // the newest spec version your reader and writer implement
const ROLES = ['reader', 'writer']; // the runner sends only the requests of the roles you declare

// Throw it from readBlob for an invalid blob, from writeBlob for a payload you refuse.
class Rejected extends Error {
  constructor(rule, pointer, message) {
    super(message);
    Object.assign(this, { rule, pointer });
  }
}
class NotImplemented extends Error {}

// ==== YOUR CODE: call your own reader and writer here ========================================
// JSON.parse rounds integers past 2^53 (an addr of 2^64 - 32 becomes 2^64) and JSON.stringify
// cannot print a BigInt: before your code relies on addr or publisher_step, replace these two
// with a pair that keeps every integer exact (../../js/testee.js has one, with BigInt).
const parseJson = JSON.parse;
const toJson = JSON.stringify;

// The decoded form (schema/protocol/decoded.json) of the Buffer `blob`, or throw Rejected.
function readBlob(blob) {
  throw new NotImplemented('no reader yet');
}

// The blob (a Buffer) your writer writes for the decoded form `payload`, or throw Rejected.
function writeBlob(payload) {
  throw new NotImplemented('no writer yet');
}
// ==== end of YOUR CODE ========================================================================

const isBase64 = (text) => typeof text === 'string' && text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);

function answer(request) {
  const { cmd, seq = null } = request;
  if (cmd === 'start') return { implementation: IMPLEMENTATION, spec_version: SPEC_VERSION, roles: ROLES };
  if (cmd !== 'read' && cmd !== 'write') {
    // count, merge and digest are optional: skipped, as is any command you do not know
    return { seq, skipped: true, reason: `unknown command ${toJson(cmd)}` };
  }
  const input = cmd === 'read' ? request.blob_b64 : request.payload;
  const fine = cmd === 'read' ? isBase64(input) : typeof input === 'object' && input !== null;
  if (!fine) return { seq, errored: true, message: `bad ${cmd} request: no ${cmd === 'read' ? 'base64 blob_b64' : 'payload object'}` };
  try {
    if (cmd === 'read') return { seq, payload: readBlob(Buffer.from(input, 'base64')) };
    return { seq, blob_b64: Buffer.from(writeBlob(input)).toString('base64') };
  } catch (error) {
    if (error instanceof NotImplemented) return { seq, skipped: true, reason: error.message };
    if (!(error instanceof Rejected)) throw error;
    const why = { rule: error.rule, message: error.message };
    if (cmd === 'read') return { seq, rejected: true, pointer: error.pointer, ...why };
    return { seq, errored: true, ...why }; // a writer's refusal names the rule it would break
  }
}

// One request per line (a read of a 64 MiB blob is a ~90 MB line); stdout carries protocol lines
// only: log to stderr.
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!line.trim()) return;
  let request;
  try {
    request = parseJson(line);
  } catch (error) {
    process.stdout.write(`${toJson({ seq: null, errored: true, message: `request is not JSON: ${error.message}` })}\n`);
    return;
  }
  if (typeof request !== 'object' || request === null) request = {};
  if (request.cmd === 'stop') process.exit(0);
  process.stdout.write(`${toJson(answer(request))}\n`);
});
