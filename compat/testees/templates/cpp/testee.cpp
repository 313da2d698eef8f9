// A refitwire conformance testee template (protocol 1): C++17 and nlohmann/json (Debian's
// nlohmann-json3-dev). Put your reader and writer where it says YOUR CODE; README.md says more.
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

using json = nlohmann::json;
using bytes = std::vector<unsigned char>;

const json implementation = {{"name", "my-implementation"}, {"version", "0.0.0"}, {"language", "c++"}};
const char* const spec_version = "1.2.0";            // the newest spec version your reader and writer implement
const json roles = json::array({"reader", "writer"}); // the runner sends only the requests of the roles you declare

struct NotImplemented { std::string reason; };
// Throw it from read_blob for an invalid blob, from write_blob for a payload you refuse.
struct Rejected { std::string rule, pointer, message; };

// ==== YOUR CODE: call your own reader and writer here ========================================
// nlohmann keeps integers up to 2^64 - 1 exact (an addr of 2^64 - 32 stays exact) and 4096.0 a
// float; an integer past 2^64 - 1 arrives as a float.

// The decoded form (schema/protocol/decoded.json) of blob, or throw Rejected.
json read_blob([[maybe_unused]] const bytes& blob) { throw NotImplemented{"no reader yet"}; }

// The blob your writer writes for the decoded form payload, or throw Rejected.
bytes write_blob([[maybe_unused]] const json& payload) { throw NotImplemented{"no writer yet"}; }
// ==== end of YOUR CODE ========================================================================

const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const bytes& data) {
  std::string out;
  for (size_t i = 0; i < data.size(); i += 3) {
    size_t n = data.size() - i < 3 ? data.size() - i : 3;
    unsigned long v = data[i] << 16 | (n > 1 ? data[i + 1] << 8 : 0) | (n > 2 ? data[i + 2] : 0);
    for (size_t k = 0; k < 4; k++) out += k <= n ? alphabet[v >> (18 - 6 * k) & 63] : '=';
  }
  return out;
}

bool unbase64(const std::string& text, bytes& out) {  // standard padded base64, else false
  size_t pad = text.size() - text.find_last_not_of('=') - 1;
  if (text.size() % 4 || pad > 2) return false;
  unsigned long v = 0;
  for (size_t i = 0; i < text.size() - pad; i++) {
    size_t digit = alphabet.find(text[i]);
    if (digit == std::string::npos) return false;
    v = v << 6 | digit;
    if (i % 4 == 3) out.insert(out.end(), {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v});
  }
  if (pad) out.insert(out.end(), {(unsigned char)(v >> (pad == 1 ? 10 : 4)), (unsigned char)(v >> 2)});
  if (pad == 2) out.pop_back();
  return true;
}

std::string text(const json& object, const char* name) {  // the string member name, or ""
  return object.contains(name) && object[name].is_string() ? object[name].get<std::string>() : "";
}

json answer(const json& request) {
  std::string cmd = text(request, "cmd");
  json seq = request.value("seq", json());
  if (cmd == "start") return {{"implementation", implementation}, {"spec_version", spec_version}, {"roles", roles}};
  if (cmd != "read" && cmd != "write")  // count, merge and digest are optional: skipped, as is anything unknown
    return {{"seq", seq}, {"skipped", true}, {"reason", "unknown command " + request.value("cmd", json()).dump()}};
  bytes blob;
  if (cmd == "read" && !(request.contains("blob_b64") && unbase64(text(request, "blob_b64"), blob)))
    return {{"seq", seq}, {"errored", true}, {"message", "bad read request: blob_b64 is not base64"}};
  if (cmd == "write" && !(request.contains("payload") && request["payload"].is_object()))
    return {{"seq", seq}, {"errored", true}, {"message", "bad write request: no payload object"}};
  try {
    if (cmd == "read") return {{"seq", seq}, {"payload", read_blob(blob)}};
    return {{"seq", seq}, {"blob_b64", base64(write_blob(request["payload"]))}};
  } catch (const NotImplemented& e) {
    return {{"seq", seq}, {"skipped", true}, {"reason", e.reason}};
  } catch (const Rejected& e) {
    if (cmd == "read") return {{"seq", seq}, {"rejected", true}, {"rule", e.rule}, {"pointer", e.pointer}, {"message", e.message}};
    return {{"seq", seq}, {"errored", true}, {"rule", e.rule}, {"message", e.message}};  // a writer's refusal
  }
}

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;  // one request per line; a read of a 64 MiB blob is a ~90 MB line
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json request = json::parse(line, nullptr, false);  // discarded (no exception) when it is not JSON
    if (request.is_object() && text(request, "cmd") == "stop") return 0;
    json reply = request.is_object() ? answer(request)
                                     : json{{"seq", nullptr}, {"errored", true}, {"message", "request is not a JSON object"}};
    std::cout << reply.dump() << '\n' << std::flush;  // stdout carries protocol lines only: log to std::cerr
  }
  return 0;
}
