// A gRPC callback MessageAllocator that puts each call's request and response on one protobuf arena: parsing a
// 10^5-pod snapshot then costs one block allocation per megabyte instead of a malloc per string, map entry and
// sub-message, and the whole call is freed at once when gRPC releases it (docs/performance.md "Planner").
#pragma once

#include "google/protobuf/arena.h"
#include "grpcpp/support/message_allocator.h"

namespace cloneset::planner::service {

template <typename Request, typename Response>
class ArenaMessageAllocator final : public grpc::MessageAllocator<Request, Response> {
 public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override { return new Holder(); }

 private:
  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    Holder() : arena_(Options()) {
      this->set_request(google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override { delete this; }

   private:
    static google::protobuf::ArenaOptions Options() {
      google::protobuf::ArenaOptions options;
      options.start_block_size = 64 << 10;  // a small request stays small
      options.max_block_size = 8 << 20;     // blocks double up to 8 MiB for the big ones
      return options;
    }
    google::protobuf::Arena arena_;
  };
};

}  // namespace cloneset::planner::service
