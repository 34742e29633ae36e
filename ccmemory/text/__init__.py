"""Text: analysis (stemming, stopwords), the calibrated BM25F score, rank fusion, query intent,
opposed rules. Pure functions over strings and numbers; used by the index and retrieval."""
