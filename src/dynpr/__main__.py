try:
    from dynpr.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command line itself is imported
    import sys

    print("dynpr: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
