{
  "targets": [
    {
      "target_name": "release_memory",
      "sources": ["src/release_memory.c"]
    }
  ]
}
