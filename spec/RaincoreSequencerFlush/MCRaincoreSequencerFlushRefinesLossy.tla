----------------- MODULE MCRaincoreSequencerFlushRefinesLossy -----------------
(* MCRaincoreSequencerFlushRefines's refinements over the lossy ring, under *)
(* MCRaincoreSequencerFlushLossy's Bounds.                                 *)
EXTENDS MCRaincoreSequencerFlushRefines, MCRaincoreSequencerFlushLossy
=============================================================================
