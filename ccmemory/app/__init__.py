"""Application layer: the Service (composition root over vault, index, embedder), reindexing
(memories and the reference tree), the one memory builder (draft) and the one resolver. It wires
the lower layers and imports no feature."""
