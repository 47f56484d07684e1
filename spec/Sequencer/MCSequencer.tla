----------------------------- MODULE MCSequencer -----------------------------
(* Bounded models of Sequencer.  The state space is finite without a       *)
(* CONSTRAINT: MaxSeq bounds the sends, MaxCrashes the views, and every    *)
(* channel holds at most the messages those bounds allow.  The models are  *)
(* listed, with their expected results, in manifest.json.                  *)
EXTENDS Sequencer
=============================================================================
