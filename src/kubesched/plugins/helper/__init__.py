"""What several plugins share (kube-scheduler's plugins/helper): node selectors, tolerations, the
storage listers."""
