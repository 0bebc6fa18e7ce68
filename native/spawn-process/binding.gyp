{
  "targets": [
    {
      "target_name": "spawn_process",
      "sources": ["src/spawn_process.c", "src/exit_watch.c"]
    }
  ]
}
