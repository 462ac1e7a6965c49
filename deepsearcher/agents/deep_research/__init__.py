"""DeepResearch (agent ``deep_research``): ``agent`` is the loop; its pieces, shared with long reports:

- ``knowledge``: knowledge items with stable ids and citation numbers (``KnowledgeStore``, shared by a long report);
- ``state``: the gap-question queue, diary, failed attempts and the action-availability rules;
- ``run``: one run's context (its own share of the token budget, ``agents.budget``), its prompts fitted to the window
  through the shared steps; ``beast``: the forced final answer (beast mode);
- ``actions``: search, read, reflect, answer; ``evaluator``: the answer checks; ``schemas``: reply schemas;
- ``prompts``: the templates, one render function per action (the web search, page reader and neighbour query
  it reaches are ``agents.tools.ResearchTools``, built by ``deepsearcher.compose``);
- ``options``: the ``agents.deep_research`` config section.
"""
