// Package planner is a thin Go client of the CloneSet planner (cloneset.planner.v1, docs/planner-api.md): a
// connection with the three calls, errors as Go errors that keep the gRPC code, and the loop a caller runs to roll
// out its own instances (loop.go). The messages and stubs are package plannerv1, generated from
// proto/planner.proto by clients/go/build.sh.
package planner

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "cloneset.dev/planner/plannerv1"
)

// Error is a failed call: the method, the gRPC status code and the planner's message. An INVALID_ARGUMENT's
// message names the field ("clone_set.spec.replicas: must be >= 0"). status.Code(err) and status.FromError(err)
// see the code through GRPCStatus.
type Error struct {
	Method  string // "Plan", "Validate", "ComputeRevision"
	Code    codes.Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("planner %s: %s: %s", e.Method, e.Code, e.Message) }

// GRPCStatus lets status.FromError and status.Code read the code of an *Error.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// Code is the gRPC code of err: its own when err is (or wraps) an *Error or a gRPC status, codes.Unknown for any
// other error, codes.OK for nil.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return status.Code(err)
}

func wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	s, _ := status.FromError(err)
	return &Error{Method: method, Code: s.Code(), Message: s.Message()}
}

// Client calls one planner. It is safe for concurrent use.
type Client struct {
	conn *grpc.ClientConn
	stub pb.PlannerClient
}

// Dial connects to the planner at address ("127.0.0.1:7070"). Without options the connection is plaintext, as
// the planner serves it inside a cluster; pass grpc.WithTransportCredentials to use TLS.
func Dial(address string, opts ...grpc.DialOption) (*Client, error) {
	if address == "" {
		return nil, errors.New("planner address: empty (want host:port)")
	}
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(address, opts...)
	if err != nil {
		return nil, fmt.Errorf("planner address %q: %w", address, err)
	}
	return &Client{conn: conn, stub: pb.NewPlannerClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the connection, for calls of your own (e.g. the health service).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Stub is the generated client, for calls with options of your own.
func (c *Client) Stub() pb.PlannerClient { return c.stub }

// ErrPodTableUnread is wrapped by Plan's error when the request carried its pods as pod_table and the planner did
// not read them all (PlanResponse.pods_read): a planner older than the table sees no pods, and its plan would
// recreate every one. Send the pods as `pods` to such a planner.
var ErrPodTableUnread = errors.New("the planner did not read pod_table (a planner older than the table): send the pods as `pods`")

// Plan asks for the next plan of one CloneSet. A plan made without reading a pod table the request carried is
// refused with ErrPodTableUnread (the pods_read check of docs/planner-api.md).
func (c *Client) Plan(ctx context.Context, req *pb.PlanRequest, opts ...grpc.CallOption) (*pb.PlanResponse, error) {
	resp, err := c.stub.Plan(ctx, req, opts...)
	if err != nil {
		return nil, wrap("Plan", err)
	}
	if sent := len(req.GetPodTable().GetName()); sent > 0 && int(resp.GetPodsRead()) != sent {
		return nil, fmt.Errorf("planner Plan: sent %d pods in pod_table, the planner read %d: %w", sent,
			resp.GetPodsRead(), ErrPodTableUnread)
	}
	return resp, nil
}

// Validate applies defaulting and the admission rules; a rejected CloneSet is an answer (ValidateResponse.errors),
// not an error.
func (c *Client) Validate(ctx context.Context, req *pb.ValidateRequest, opts ...grpc.CallOption) (*pb.ValidateResponse, error) {
	resp, err := c.stub.Validate(ctx, req, opts...)
	return resp, wrap("Validate", err)
}

// ComputeRevision returns the ControllerRevision the CloneSet's template maps to.
func (c *Client) ComputeRevision(ctx context.Context, req *pb.ComputeRevisionRequest, opts ...grpc.CallOption) (*pb.ComputeRevisionResponse, error) {
	resp, err := c.stub.ComputeRevision(ctx, req, opts...)
	return resp, wrap("ComputeRevision", err)
}
