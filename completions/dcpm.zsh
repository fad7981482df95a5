
#compdef dcpm

_dcpm_completion() {
  eval $(env _TYPER_COMPLETE_ARGS="${words[1,$CURRENT]}" _DCPM_COMPLETE=complete_zsh dcpm)
}

compdef _dcpm_completion dcpm

