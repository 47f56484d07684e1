------------------------------- MODULE MCFlush -------------------------------
(* Bounded models of Flush.  The state space is finite without a           *)
(* CONSTRAINT: MaxMsgs bounds the application multicasts, MaxCrashes and   *)
(* MaxLeaves the crashes and leaves, N - NInit the joins; every view       *)
(* change consumes at least one of those events, so views are bounded, and *)
(* every channel holds at most the messages those bounds allow.  The       *)
(* models are listed, with their expected results, in manifest.json.       *)
EXTENDS Flush
=============================================================================
