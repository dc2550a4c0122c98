"""The ledger's operations, each one function that takes the caller and its checked input.

The API's routes (`ledger.api`), the MCP tools (`ledger.mcp`) and the dashboard (`review`) all call
these: who may do what (an agent for itself, a coordinator for anyone), which transport the audit
names, and the shapes of what each takes (`shapes`) and answers (`answers`) are stated here once.
Counting an agent's writes is the frames' part: every API write route and every MCP write tool counts
one before it calls its action.
"""
