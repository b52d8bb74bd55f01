package planner_test

// The client against a fake planner on 127.0.0.1 (an in-process gRPC server): errors keep their gRPC code and
// message, and a plan made without reading the pod table the request carried (an older planner) is refused.

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"cloneset.dev/planner"
	pb "cloneset.dev/planner/plannerv1"
)

// fakePlanner answers Plan with podsRead pods read, or fails with err.
type fakePlanner struct {
	pb.UnimplementedPlannerServer
	podsRead int32
	err      error
}

func (f *fakePlanner) Plan(context.Context, *pb.PlanRequest) (*pb.PlanResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &pb.PlanResponse{PodsRead: f.podsRead}, nil
}

func startFake(t *testing.T, f *fakePlanner) *planner.Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterPlannerServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	c, err := planner.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestClientAgainstFakePlanner(t *testing.T) {
	table := &pb.PodTable{Name: []uint32{1, 2}, StringData: []byte("ab"), StringEnds: []uint32{1, 2}}
	cases := []struct {
		name     string
		fake     *fakePlanner
		req      *pb.PlanRequest
		wantCode codes.Code
		wantIs   error
		wantText string
	}{
		{name: "a table of 2 pods read by the planner", fake: &fakePlanner{podsRead: 2},
			req: &pb.PlanRequest{PodTable: table}, wantCode: codes.OK},
		{name: "a planner older than the table reads none", fake: &fakePlanner{podsRead: 0},
			req: &pb.PlanRequest{PodTable: table}, wantCode: codes.Unknown, wantIs: planner.ErrPodTableUnread,
			wantText: "sent 2 pods in pod_table, the planner read 0"},
		{name: "pods sent as objects: no check", fake: &fakePlanner{podsRead: 0},
			req: &pb.PlanRequest{Pods: []*pb.Pod{{}}}, wantCode: codes.OK},
		{name: "INVALID_ARGUMENT keeps its code and the field",
			fake: &fakePlanner{err: status.Error(codes.InvalidArgument, "spec.replicas: must be >= 0")},
			req:  &pb.PlanRequest{}, wantCode: codes.InvalidArgument, wantText: "spec.replicas: must be >= 0"},
		{name: "UNAVAILABLE keeps its code", fake: &fakePlanner{err: status.Error(codes.Unavailable, "stopping")},
			req: &pb.PlanRequest{}, wantCode: codes.Unavailable, wantText: "stopping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := startFake(t, c.fake)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := client.Plan(ctx, c.req)
			if got := planner.Code(err); got != c.wantCode {
				t.Fatalf("code: got %v (%v), want %v", got, err, c.wantCode)
			}
			if c.wantIs != nil && !errors.Is(err, c.wantIs) {
				t.Errorf("error %v is not %v", err, c.wantIs)
			}
			if err != nil && !strings.Contains(err.Error(), c.wantText) {
				t.Errorf("message %q does not contain %q", err, c.wantText)
			}
			var perr *planner.Error
			if errors.As(err, &perr) && status.Code(err) != perr.Code {
				t.Errorf("status.Code(err) = %v, want the Error's %v", status.Code(err), perr.Code)
			}
		})
	}
}
