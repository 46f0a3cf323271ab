// A small evigate client in Java, with Debian's grpc-java (Netty transport) and protobuf-java.
//
// It asks a question with Chat and again with StreamChat (printing each stage as it arrives), reads
// the session back with GetTrace, marks it useful with SubmitFeedback, and decodes the rich error
// details (google.rpc.Status in the grpc-status-details-bin trailer: ErrorInfo, BadRequest,
// RetryInfo) of a rejected request. Build and run: see the README, section "Java clients".
//
// Usage: java EvigateExample HOST PORT [TOKEN]
// Prints what it did and ends with "OK"; exits 1 when a reply is not what the contract promises.

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.evigate.v1.ChatRequest;
import io.evigate.v1.ChatResponse;
import io.evigate.v1.ChatServiceGrpc;
import io.evigate.v1.Feedback;
import io.evigate.v1.FeedbackServiceGrpc;
import io.evigate.v1.GetTraceRequest;
import io.evigate.v1.SessionStatus;
import io.evigate.v1.StreamChatRequest;
import io.evigate.v1.StreamChatResponse;
import io.evigate.v1.SubmitFeedbackRequest;
import io.evigate.v1.SubmitFeedbackResponse;
import io.evigate.v1.ToolInvocation;
import io.evigate.v1.Trace;
import io.evigate.v1.TraceServiceGrpc;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

public final class EvigateExample {
    private static final Metadata.Key<byte[]> STATUS_DETAILS =
        Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);

    /** The rich error details of a failed call, as the server sends them (AIP-193). */
    static final class ErrorDetails {
        ErrorInfo info;
        BadRequest badRequest;
        RetryInfo retry;
    }

    static ErrorDetails details(StatusRuntimeException error) throws InvalidProtocolBufferException {
        ErrorDetails out = new ErrorDetails();
        Metadata trailers = error.getTrailers();
        byte[] raw = trailers == null ? null : trailers.get(STATUS_DETAILS);
        if (raw == null) {
            return out;
        }
        com.google.rpc.Status status = com.google.rpc.Status.parseFrom(raw);
        for (Any detail : status.getDetailsList()) {
            if (detail.is(ErrorInfo.class)) {
                out.info = detail.unpack(ErrorInfo.class);
            } else if (detail.is(BadRequest.class)) {
                out.badRequest = detail.unpack(BadRequest.class);
            } else if (detail.is(RetryInfo.class)) {
                out.retry = detail.unpack(RetryInfo.class);
            }
        }
        return out;
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("check failed: " + what);
        }
    }

    public static void main(String[] args) throws Exception {
        ManagedChannel managed = NettyChannelBuilder.forAddress(args[0], Integer.parseInt(args[1]))
            .usePlaintext().build();
        Channel channel = managed;
        if (args.length > 2) {
            Metadata headers = new Metadata();
            headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + args[2]);
            channel = ClientInterceptors.intercept(managed, MetadataUtils.newAttachHeadersInterceptor(headers));
        }
        try {
            ChatServiceGrpc.ChatServiceBlockingStub chat = ChatServiceGrpc.newBlockingStub(channel);
            String question = "Does payment-service have a HighCPUUsage alert right now?";

            // Chat: one reply with the answer, the verdict and the claims with their citations.
            ChatResponse reply = chat.withDeadlineAfter(60, TimeUnit.SECONDS)
                .chat(ChatRequest.newBuilder().setQuery(question).setLanguage("en").build());
            check(reply.getStatus() == SessionStatus.SESSION_STATUS_SUCCESS, "Chat SUCCESS");
            System.out.println("Chat " + reply.getSessionId() + ": " + reply.getAnswer());

            // StreamChat: each stage as it happens, the result last.
            List<String> stages = new ArrayList<>();
            ChatResponse streamed = null;
            Iterator<StreamChatResponse> events = chat.withDeadlineAfter(60, TimeUnit.SECONDS)
                .streamChat(StreamChatRequest.newBuilder().setQuery(question).setLanguage("en").build());
            while (events.hasNext()) {
                StreamChatResponse event = events.next();
                stages.add(event.getEventCase().name().toLowerCase());
                if (event.hasToolInvocation()) {
                    ToolInvocation call = event.getToolInvocation();
                    check(call.hasCreateTime() && call.getLatencyMs() > 0, "streamed invocation has its time");
                }
                if (event.hasResult()) {
                    streamed = event.getResult();
                }
            }
            check(streamed != null && streamed.getStatus() == SessionStatus.SESSION_STATUS_SUCCESS, "stream result");
            check(stages.get(0).equals("plan") && stages.get(stages.size() - 1).equals("result"), "stage order");
            System.out.println("StreamChat " + streamed.getSessionId() + ": " + String.join(" > ", stages));

            // GetTrace: the plan, every tool call with its evidence refs, the rounds and verdicts.
            TraceServiceGrpc.TraceServiceBlockingStub traces = TraceServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS);
            Trace trace = traces.getTrace(GetTraceRequest.newBuilder().setSessionId(reply.getSessionId()).build())
                .getTrace();
            check(trace.getToolInvocationsCount() > 0 && trace.getRoundsCount() > 0, "trace has calls and rounds");
            System.out.println("GetTrace: " + trace.getToolInvocationsCount() + " tool calls, "
                + trace.getRoundsCount() + " round(s)");

            // SubmitFeedback: useful turns the answer into a case (idempotent).
            SubmitFeedbackResponse recorded = FeedbackServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .submitFeedback(SubmitFeedbackRequest.newBuilder()
                    .setSessionId(reply.getSessionId()).setFeedback(Feedback.FEEDBACK_USEFUL).build());
            check(recorded.getSuccess() && !recorded.getCaseId().isEmpty(), "case created");
            System.out.println("SubmitFeedback: case " + recorded.getCaseId());

            // An invalid request: INVALID_ARGUMENT with ErrorInfo and one field violation per problem.
            try {
                chat.withDeadlineAfter(30, TimeUnit.SECONDS)
                    .chat(ChatRequest.newBuilder().setQuery("").setLanguage("fr").build());
                check(false, "INVALID_ARGUMENT expected");
            } catch (StatusRuntimeException e) {
                check(e.getStatus().getCode() == Status.Code.INVALID_ARGUMENT, "INVALID_ARGUMENT, got " + e.getStatus());
                ErrorDetails found = details(e);
                check(found.info != null && found.info.getDomain().equals("evigate"), "ErrorInfo domain");
                check(found.badRequest != null && found.badRequest.getFieldViolationsCount() == 2, "two violations");
                System.out.println("Chat(query=\"\", language=fr): " + e.getStatus().getCode() + " reason "
                    + found.info.getReason());
                for (BadRequest.FieldViolation violation : found.badRequest.getFieldViolationsList()) {
                    System.out.println("  " + violation.getField() + ": " + violation.getDescription());
                }
            }

            // An unknown session: NOT_FOUND with ErrorInfo (reason and metadata).
            try {
                traces.getTrace(GetTraceRequest.newBuilder().setSessionId("no-such-session").build());
                check(false, "NOT_FOUND expected");
            } catch (StatusRuntimeException e) {
                ErrorDetails found = details(e);
                check(e.getStatus().getCode() == Status.Code.NOT_FOUND, "NOT_FOUND");
                check(found.info != null && found.info.getReason().equals("SESSION_NOT_FOUND"), "reason");
                System.out.println("GetTrace(no-such-session): NOT_FOUND reason " + found.info.getReason()
                    + " " + found.info.getMetadataMap());
            }
            System.out.println("OK");
        } finally {
            managed.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
