"""The bottom storage layer, under the training engine, the chapters and the pipeline alike.

* :mod:`.paths` -- the project root and its folders, where a profile's run store is, writable-output checks.
* :mod:`.results` -- atomic writes (``write_file_atomic``, ``write_json_atomic``) and the :class:`~.results.Recorder`
  of a notebook's key numbers (a notebook's context holds one).
* :mod:`.provenance` -- versions, git commit and platform of a record; the parameters, source and
  configuration hashes of a notebook run.

It imports nothing else of the project.
"""
