"""The run-wide budget N shards share: one cost cap, one token bucket and one back-off per
provider, held by ``skillab budget serve`` (``service``, ``ledger``) and asked by every model call
of every shard before it goes upstream (``client``); ``estimate`` is what a request reserves.
"""
