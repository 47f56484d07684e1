---------------------- MODULE MCRaincoreSequencerFlush ----------------------
(* Bounded models of RaincoreSequencerFlush.  Finite without a CONSTRAINT  *)
(* (as MCRaincoreFlush): no token sequence number, MaxSeq bounds the sends *)
(* of each sender, MaxCrashes and the joiners bound the views.  Models and *)
(* expected results: manifest.json.                                        *)
EXTENDS RaincoreSequencerFlush
=============================================================================
