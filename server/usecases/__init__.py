"""The use cases: one module each, what happens on Chat / StreamChat, SubmitFeedback, GetTrace,
ListSessions and Check. Front ends (the gRPC servicers, a web page) validate and translate their
wire format, call one of these, and translate the result back; nothing here knows about gRPC."""
