// A refitwire conformance testee template (protocol 1): Java 17 and Gson (Debian's libgoogle-gson-java).
// Put your reader and writer where it says YOUR CODE; README.md says how to build and run it.
import com.google.gson.*;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

public final class Testee {
    // spec_version: the newest spec version your reader and writer implement; roles: what you
    // implement (the runner sends only the requests of the roles you declare)
    static final String HANDSHAKE = """
        {"implementation": {"name": "my-implementation", "version": "0.0.0", "language": "java"},
         "spec_version": "1.2.0", "roles": ["reader", "writer"]}""";

    /** Throw it from readBlob for an invalid blob, from writeBlob for a payload you refuse. */
    static final class Rejected extends Exception {
        final String rule, pointer;
        Rejected(String rule, String pointer, String message) { super(message); this.rule = rule; this.pointer = pointer; }
    }

    // ==== YOUR CODE: call your own reader and writer here =====================================
    // Gson keeps every number's digits (getAsBigInteger and getAsBigDecimal read them exactly, and
    // they are written back as they came): an addr of 2^64 - 32 stays exact, 4096.0 stays 4096.0.

    /** The decoded form (schema/protocol/decoded.json) of blob, or throw Rejected. */
    static JsonObject readBlob(byte[] blob) throws Rejected {
        throw new UnsupportedOperationException("no reader yet");
    }

    /** The blob your writer writes for the decoded form payload, or throw Rejected. */
    static byte[] writeBlob(JsonObject payload) throws Rejected {
        throw new UnsupportedOperationException("no writer yet");
    }
    // ==== end of YOUR CODE =====================================================================

    static JsonObject answer(JsonElement line) {
        JsonObject request = line instanceof JsonObject r ? r : new JsonObject(), reply = new JsonObject();
        String cmd = text(request.get("cmd"));
        reply.add("seq", request.has("seq") ? request.get("seq") : JsonNull.INSTANCE);
        if (!(line instanceof JsonObject)) return put(reply, "errored", "message", "request is not a JSON object");
        try {
            if ("start".equals(cmd)) {
                return JsonParser.parseString(HANDSHAKE).getAsJsonObject();
            } else if ("read".equals(cmd)) {
                String b64 = text(request.get("blob_b64"));
                byte[] blob = Base64.getDecoder().decode(b64 == null ? "?" : b64);
                reply.add("payload", readBlob(blob));
            } else if ("write".equals(cmd) && request.get("payload") instanceof JsonObject payload) {
                reply.addProperty("blob_b64", Base64.getEncoder().encodeToString(writeBlob(payload)));
            } else if ("write".equals(cmd)) {
                return put(reply, "errored", "message", "bad write request: no payload object");
            } else { // count, merge and digest are optional: skipped, as is any command you do not know
                return put(reply, "skipped", "reason", "unknown command " + request.get("cmd"));
            }
        } catch (UnsupportedOperationException e) {
            return put(reply, "skipped", "reason", e.getMessage());
        } catch (IllegalArgumentException e) { // from Base64's decoder
            return put(reply, "errored", "message", "bad read request: blob_b64 is not base64");
        } catch (Rejected e) {
            reply.addProperty("rule", e.rule);
            if (!"read".equals(cmd)) return put(reply, "errored", "message", e.getMessage()); // a writer's refusal
            reply.addProperty("pointer", e.pointer);
            return put(reply, "rejected", "message", e.getMessage());
        }
        return reply;
    }

    static String text(JsonElement e) {
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isString() ? e.getAsString() : null;
    }

    static JsonObject put(JsonObject reply, String flag, String name, String value) {
        reply.addProperty(flag, true);
        reply.addProperty(name, value);
        return reply;
    }

    public static void main(String[] args) throws IOException {
        var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        var out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        Gson gson = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();
        for (String line; (line = in.readLine()) != null; ) { // a read of a 64 MiB blob is a ~90 MB line
            if (line.isBlank()) continue;
            JsonElement request;
            try {
                request = JsonParser.parseString(line);
            } catch (JsonParseException e) {
                request = JsonNull.INSTANCE; // answered as a request that is not an object
            }
            if (request instanceof JsonObject r && "stop".equals(text(r.get("cmd")))) return;
            out.print(gson.toJson(answer(request)) + "\n"); // stdout carries protocol lines only: log to System.err
            out.flush();
        }
    }
}
