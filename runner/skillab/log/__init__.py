"""Everything a run reads or writes on disk: the results document (``results``), its compact
form (``compact``), the run history (``history``, ``history_entry``) and the checkpoint journal
(``checkpoint``). Each file has a versioned ``format``; nothing here runs, scores or renders."""
