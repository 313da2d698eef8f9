// A refitwire conformance testee template (protocol 1): Go 1.19+, standard library only.
// Put your reader and writer where it says YOUR CODE; README.md says how to build and run it.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

type obj = map[string]any

var (
	implementation    = obj{"name": "my-implementation", "version": "0.0.0", "language": "go"}
	specVersion       = "1.2.0"                      // the newest spec version your reader and writer implement
	roles             = []string{"reader", "writer"} // the runner sends only the requests of the roles you declare
	errNotImplemented = errors.New("not implemented yet")
)

// Rejection: return it from readBlob for an invalid blob, from writeBlob for a payload you refuse.
type Rejection struct{ Rule, Pointer, Message string }

func (r *Rejection) Error() string { return r.Message }

// ==== YOUR CODE: call your own reader and writer here ========================================
// Requests are decoded with UseNumber: every number is a json.Number, its digits exactly as sent
// (an addr of 2^64 - 32 stays exact; 4096.0 stays "4096.0"). A json.Number is encoded as its digits.

// readBlob returns the decoded form (schema/protocol/decoded.json) of blob, or a *Rejection.
func readBlob(blob []byte) (obj, error) { return nil, errNotImplemented }

// writeBlob returns the blob your writer writes for the decoded form payload, or a *Rejection.
func writeBlob(payload obj) ([]byte, error) { return nil, errNotImplemented }

// ==== end of YOUR CODE ========================================================================

func answer(request obj) obj {
	cmd, seq := request["cmd"], request["seq"]
	done, err := obj{"seq": seq}, error(nil)
	switch cmd {
	case "start":
		return obj{"implementation": implementation, "spec_version": specVersion, "roles": roles}
	case "read":
		text, ok := request["blob_b64"].(string)
		blob, bad := base64.StdEncoding.DecodeString(text)
		if !ok || bad != nil {
			return obj{"seq": seq, "errored": true, "message": "bad read request: blob_b64 is not base64"}
		}
		done["payload"], err = readBlob(blob)
	case "write":
		payload, ok := request["payload"].(obj)
		if !ok {
			return obj{"seq": seq, "errored": true, "message": "bad write request: no payload object"}
		}
		blob, failed := writeBlob(payload)
		done["blob_b64"], err = base64.StdEncoding.EncodeToString(blob), failed
	default: // count, merge and digest are optional: skipped, as is any command you do not know
		return obj{"seq": seq, "skipped": true, "reason": fmt.Sprintf("unknown command %v", cmd)}
	}
	var rejection *Rejection
	if err == nil {
		return done
	} else if errors.Is(err, errNotImplemented) {
		return obj{"seq": seq, "skipped": true, "reason": err.Error()}
	} else if !errors.As(err, &rejection) {
		return obj{"seq": seq, "errored": true, "message": err.Error()}
	} else if cmd == "read" {
		return obj{"seq": seq, "rejected": true, "rule": rejection.Rule, "pointer": rejection.Pointer, "message": rejection.Message}
	} // a writer's refusal names the rule the payload would break
	return obj{"seq": seq, "errored": true, "rule": rejection.Rule, "message": rejection.Message}
}

func main() {
	in, out := bufio.NewReader(os.Stdin), json.NewEncoder(os.Stdout) // stdout: protocol lines only
	out.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n') // one request per line; a read of a 64 MiB blob is a ~90 MB line
		request, decoder := obj{}, json.NewDecoder(bytes.NewReader(line))
		decoder.UseNumber()
		switch bad := decoder.Decode(&request); {
		case bad == io.EOF: // a blank line: no answer
		case bad != nil:
			out.Encode(obj{"seq": nil, "errored": true, "message": "request is not a JSON object"})
		case request["cmd"] == "stop":
			return
		default:
			out.Encode(answer(request))
		}
		if err != nil { // io.EOF: the runner closed stdin
			return
		}
	}
}
