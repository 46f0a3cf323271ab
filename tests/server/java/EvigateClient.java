// A Java client built from proto/ with Debian's grpc-java and protobuf packages (Netty transport).
// Usage: java EvigateClient HOST PORT TOKEN ; prints "OK <session_id> <case_id>" and exits 0 when
// every reply is what the contract promises, otherwise prints the failure and exits 1.

import io.evigate.v1.ChatRequest;
import io.evigate.v1.ChatResponse;
import io.evigate.v1.ChatServiceGrpc;
import io.evigate.v1.ClaimType;
import io.evigate.v1.Feedback;
import io.evigate.v1.FeedbackServiceGrpc;
import io.evigate.v1.GetTraceRequest;
import io.evigate.v1.SessionStatus;
import io.evigate.v1.SubmitFeedbackRequest;
import io.evigate.v1.SubmitFeedbackResponse;
import io.evigate.v1.Trace;
import io.evigate.v1.TraceServiceGrpc;
import io.evigate.v1.VerdictLabel;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.util.concurrent.TimeUnit;

public final class EvigateClient {
    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("check failed: " + what);
        }
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + args[2]);
        ManagedChannel channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
        try {
            ChatServiceGrpc.ChatServiceBlockingStub chat = ChatServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                .withDeadlineAfter(60, TimeUnit.SECONDS);
            ChatResponse reply = chat.chat(ChatRequest.newBuilder()
                .setQuery("payment-service 现在有 HighCPUUsage 告警吗？").build());
            check(reply.getStatus() == SessionStatus.SESSION_STATUS_SUCCESS, "status SUCCESS");
            check(reply.getVerdict().getVerdict() == VerdictLabel.VERDICT_LABEL_PASS, "verdict PASS");
            check(reply.getAnswer().contains("92%"), "answer cites 92%");
            check(reply.getEvidence().getClaims(0).getClaimType() == ClaimType.CLAIM_TYPE_OBSERVATION, "observation");
            check(reply.getEvidence().getClaims(0).getEvidenceBindings(0).hasSourceInvocationId(), "cited invocation");

            FeedbackServiceGrpc.FeedbackServiceBlockingStub feedback = FeedbackServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
            SubmitFeedbackResponse recorded = feedback.submitFeedback(SubmitFeedbackRequest.newBuilder()
                .setSessionId(reply.getSessionId()).setFeedback(Feedback.FEEDBACK_USEFUL).build());
            check(recorded.getSuccess() && !recorded.getCaseId().isEmpty(), "case created");
            check(recorded.getMessage().equals("反馈已记录"), "message");

            TraceServiceGrpc.TraceServiceBlockingStub traces = TraceServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
            Trace trace = traces.getTrace(GetTraceRequest.newBuilder().setSessionId(reply.getSessionId()).build())
                .getTrace();
            check(trace.getSession().getSessionId().equals(reply.getSessionId()), "trace session");
            check(trace.getCaseId().equals(recorded.getCaseId()), "trace case id");
            check(trace.getFeedback() == Feedback.FEEDBACK_USEFUL, "trace feedback");
            check(trace.getRoundsCount() >= 1 && trace.getRounds(0).getGatekeeperResult().getCheckedBindingsCount() >= 1,
                "trace rounds");

            try {
                traces.getTrace(GetTraceRequest.newBuilder().setSessionId("no-such-session").build());
                check(false, "NOT_FOUND expected");
            } catch (StatusRuntimeException e) {
                check(e.getStatus().getCode() == Status.Code.NOT_FOUND, "NOT_FOUND, got " + e.getStatus());
            }
            try {
                TraceServiceGrpc.newBlockingStub(channel)
                    .getTrace(GetTraceRequest.newBuilder().setSessionId(reply.getSessionId()).build());
                check(false, "UNAUTHENTICATED expected");
            } catch (StatusRuntimeException e) {
                check(e.getStatus().getCode() == Status.Code.UNAUTHENTICATED, "UNAUTHENTICATED");
            }
            System.out.println("OK " + reply.getSessionId() + " " + recorded.getCaseId());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
