--------------------------- MODULE MCSequencerFlush ---------------------------
(* Bounded models of SequencerFlush.  The state space is finite without a  *)
(* CONSTRAINT: MaxSeq bounds the sends, MaxCrashes the crashes and so the  *)
(* views (a view change needs a crash), and every channel holds at most    *)
(* the messages those bounds allow.  The models are listed, with their     *)
(* expected results, in manifest.json.                                     *)
EXTENDS SequencerFlush
=============================================================================
