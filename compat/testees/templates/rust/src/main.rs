//! A refitwire conformance testee template (protocol 1): Rust, serde_json and base64 (Debian's
//! librust-serde-json-dev and librust-base64-dev). Put your reader and writer where it says
//! YOUR CODE; README.md says how to build and run it.
use serde_json::{json, Value};
use std::io::{self, BufRead, Write};

const SPEC_VERSION: &str = "1.2.0"; // the newest spec version your reader and writer implement
const ROLES: [&str; 2] = ["reader", "writer"]; // the runner sends only the requests of these roles

/// What read_blob and write_blob return instead of an answer.
pub enum Failure {
    NotImplemented(&'static str),
    /// An invalid blob (read) or a payload you refuse (write): the SPEC rule, its JSON pointer, why.
    Rejected {
        rule: String,
        pointer: String,
        message: String,
    },
}

// ==== YOUR CODE: call your own reader and writer here ========================================
// serde_json's arbitrary_precision (Cargo.toml) keeps every number's digits: an addr of 2^64 - 32
// stays exact, 4096.0 stays 4096.0, and both are written back as they came.

/// The decoded form (schema/protocol/decoded.json) of `blob`.
fn read_blob(_blob: &[u8]) -> Result<Value, Failure> {
    Err(Failure::NotImplemented("no reader yet"))
}

/// The blob your writer writes for the decoded form `payload`.
fn write_blob(_payload: &Value) -> Result<Vec<u8>, Failure> {
    Err(Failure::NotImplemented("no writer yet"))
}
// ==== end of YOUR CODE ========================================================================

fn answer(request: &Value) -> Value {
    let (cmd, seq) = (request["cmd"].as_str().unwrap_or(""), &request["seq"]);
    let failure = match cmd {
        "start" => {
            let implementation = json!({"name": "my-implementation", "version": "0.0.0", "language": "rust"});
            return json!({"implementation": implementation, "spec_version": SPEC_VERSION, "roles": ROLES});
        }
        "read" => match request["blob_b64"].as_str().map(base64::decode) {
            Some(Ok(blob)) => match read_blob(&blob) {
                Ok(payload) => return json!({"seq": seq, "payload": payload}),
                Err(failure) => failure,
            },
            _ => return json!({"seq": seq, "errored": true, "message": "bad read request: blob_b64 is not base64"}),
        },
        "write" if request["payload"].is_object() => match write_blob(&request["payload"]) {
            Ok(blob) => return json!({"seq": seq, "blob_b64": base64::encode(blob)}),
            Err(failure) => failure,
        },
        "write" => return json!({"seq": seq, "errored": true, "message": "bad write request: no payload object"}),
        // count, merge and digest are optional: skipped, as is any command you do not know
        _ => return json!({"seq": seq, "skipped": true, "reason": format!("unknown command {}", request["cmd"])}),
    };
    match failure {
        Failure::NotImplemented(reason) => json!({"seq": seq, "skipped": true, "reason": reason}),
        Failure::Rejected { rule, pointer, message } if cmd == "read" => {
            json!({"seq": seq, "rejected": true, "rule": rule, "pointer": pointer, "message": message})
        }
        // a writer's refusal names the rule the payload would break
        Failure::Rejected { rule, message, .. } => {
            json!({"seq": seq, "errored": true, "rule": rule, "message": message})
        }
    }
}

fn main() {
    let (mut input, mut out, mut line) = (io::stdin().lock(), io::stdout(), String::new());
    loop {
        line.clear(); // one request per line; a read of a 64 MiB blob is a ~90 MB line
        if input.read_line(&mut line).expect("stdin") == 0 {
            break;
        } else if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(request) if request["cmd"] == "stop" => break,
            Ok(request) if request.is_object() => answer(&request),
            _ => json!({"seq": null, "errored": true, "message": "request is not a JSON object"}),
        };
        // stdout carries protocol lines only: log to stderr
        writeln!(out, "{}", reply).and_then(|_| out.flush()).expect("stdout");
    }
}
