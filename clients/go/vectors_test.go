package planner_test

// client_go_vectors: every shared vector (tests/vectors/planner/v1/*.json, format in tests/vectors/README.md)
// sent through this client to a real planner on loopback; the answer must equal the vector's response, message for
// message (proto.Equal after parsing the expected JSON into the Go type), or fail with the vector's code and a
// message naming the field.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"cloneset.dev/planner"
	"cloneset.dev/planner/internal/plannertest"
	pb "cloneset.dev/planner/plannerv1"
)

type vector struct {
	Name         string          `json:"name"`
	Method       string          `json:"method"`
	Request      json.RawMessage `json:"request"`
	RequestBytes string          `json:"requestBytes"`
	Response     json.RawMessage `json:"response"`
	Error        *struct {
		Code            string `json:"code"`
		MessageContains string `json:"messageContains"`
	} `json:"error"`
}

// rawCodec sends a request's bytes as they are (the unparsable-bytes vectors).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

func loadVectors(t *testing.T) []vector {
	dir := os.Getenv("VECTORS_DIR")
	if dir == "" {
		t.Fatal("VECTORS_DIR is not set (ctest sets it to tests/vectors/planner/v1)")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no vectors in %s", dir)
	}
	var out []vector
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if v.Name == "" {
			v.Name = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		out = append(out, v)
	}
	return out
}

// messages returns a new request and response message of method.
func messages(method string) (proto.Message, proto.Message, bool) {
	switch method {
	case "Plan":
		return &pb.PlanRequest{}, &pb.PlanResponse{}, true
	case "Validate":
		return &pb.ValidateRequest{}, &pb.ValidateResponse{}, true
	case "ComputeRevision":
		return &pb.ComputeRevisionRequest{}, &pb.ComputeRevisionResponse{}, true
	}
	return nil, nil, false
}

func call(ctx context.Context, c *planner.Client, method string, req proto.Message) (proto.Message, error) {
	switch method {
	case "Plan":
		return c.Plan(ctx, req.(*pb.PlanRequest))
	case "Validate":
		return c.Validate(ctx, req.(*pb.ValidateRequest))
	default:
		return c.ComputeRevision(ctx, req.(*pb.ComputeRevisionRequest))
	}
}

// startPlanner starts the planner under test (PLANNER_BIN) on loopback and returns a client of it; both are
// stopped when the test ends.
func startPlanner(t *testing.T) *planner.Client {
	t.Helper()
	p, err := plannertest.Start(os.Getenv("PLANNER_BIN"), 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	client, err := planner.Dial(p.Address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func TestVectors(t *testing.T) {
	vectors := loadVectors(t)
	client := startPlanner(t)
	strict := protojson.UnmarshalOptions{} // unknown fields are an error: a vector holds only fields of the proto
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			req, want, ok := messages(v.Method)
			if !ok {
				t.Fatalf("unknown method %q", v.Method)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var got proto.Message
			var err error
			if v.RequestBytes != "" {
				raw, derr := base64.StdEncoding.DecodeString(v.RequestBytes)
				if derr != nil {
					t.Fatalf("requestBytes: %v", derr)
				}
				got = proto.Clone(want)
				err = invokeRaw(ctx, client, v.Method, raw, got)
			} else {
				if err := strict.Unmarshal(v.Request, req); err != nil {
					t.Fatalf("request: %v", err)
				}
				got, err = call(ctx, client, v.Method, req)
			}
			if v.Error != nil {
				if err == nil {
					t.Fatalf("want %s containing %q, got a response", v.Error.Code, v.Error.MessageContains)
				}
				var code codes.Code
				if uerr := code.UnmarshalJSON([]byte(`"` + v.Error.Code + `"`)); uerr != nil {
					t.Fatalf("error.code %q: %v", v.Error.Code, uerr)
				}
				if planner.Code(err) != code {
					t.Fatalf("code: got %v (%v), want %v", planner.Code(err), err, code)
				}
				if !strings.Contains(err.Error(), v.Error.MessageContains) {
					t.Fatalf("message %q does not contain %q", err, v.Error.MessageContains)
				}
				return
			}
			if err != nil {
				t.Fatalf("call failed: %v", err)
			}
			if err := strict.Unmarshal(v.Response, want); err != nil {
				t.Fatalf("response: %v", err)
			}
			if !proto.Equal(want, got) {
				t.Fatalf("response differs from the vector\nwant: %s\ngot:  %s", protojson.Format(want), protojson.Format(got))
			}
		})
	}
}

func invokeRaw(ctx context.Context, c *planner.Client, method string, raw []byte, out proto.Message) error {
	return c.Conn().Invoke(ctx, "/cloneset.planner.v1.Planner/"+method, raw, out, grpc.ForceCodec(rawCodec{}))
}

// TestExpandInPlaceBatchesMatchesPlanner: for every Plan vector whose request accepts in-place batches and whose
// answer has one, ExpandInPlaceBatches of that answer must be the planner's answer to the same request without
// accept_in_place_batches (planner.proto: "the plan such a request would have got, byte for byte").
func TestExpandInPlaceBatchesMatchesPlanner(t *testing.T) {
	vectors := loadVectors(t)
	client := startPlanner(t)
	checked := 0
	for _, v := range vectors {
		if v.Method != "Plan" || v.Response == nil || len(v.Request) == 0 {
			continue
		}
		req, batched := &pb.PlanRequest{}, &pb.PlanResponse{}
		if err := protojson.Unmarshal(v.Request, req); err != nil {
			t.Fatalf("%s: request: %v", v.Name, err)
		}
		if err := protojson.Unmarshal(v.Response, batched); err != nil {
			t.Fatalf("%s: response: %v", v.Name, err)
		}
		hasBatch := false
		for _, a := range batched.Actions {
			hasBatch = hasBatch || a.GetStartInPlaceUpdates() != nil
		}
		if !req.AcceptInPlaceBatches || !hasBatch {
			continue
		}
		checked++
		t.Run(v.Name, func(t *testing.T) {
			req.AcceptInPlaceBatches = false
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			want, err := client.Plan(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			planner.ExpandInPlaceBatches(batched)
			if !proto.Equal(want, batched) {
				t.Fatalf("expanded batches differ from the planner's per-pod plan\nwant: %s\ngot:  %s",
					protojson.Format(want), protojson.Format(batched))
			}
		})
	}
	if checked == 0 {
		t.Fatal("no Plan vector accepts in-place batches and answers one: the expansion is not checked against the planner")
	}
}
